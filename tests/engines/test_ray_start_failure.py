"""A Ray that does not start, and Ray's logs kept with the run: without starting Ray (its start is replaced by one
that writes a session the way Ray lays it out, then fails as Ray 2.60 does when its raylet dies during start-up)."""

import os

import pytest

from launch.engines.distributed import ray_engine
from launch.engines.distributed.ray_engine import TEMP_DIR, RayOptions, ray_temp_dir
from stack import require_installed

require_installed("ray")

TIMED_OUT = ("The current node timed out during startup. This could happen because some of the raylet failed to "
             "startup or the GCS has become overloaded.")


def _write_session(temp_dir: str, name: str, log: str) -> None:
    """A Ray session as Ray writes one: logs, sockets, and `session_latest`, an absolute link to the session."""
    session = os.path.join(temp_dir, name)
    os.makedirs(os.path.join(session, "logs"))
    os.makedirs(os.path.join(session, "sockets"))
    with open(os.path.join(session, "logs", "raylet.out"), "w") as f:
        f.write(log)
    latest = os.path.join(temp_dir, "session_latest")
    if os.path.islink(latest):
        os.remove(latest)
    os.symlink(session, latest)


def test_a_ray_that_does_not_start_keeps_its_logs_in_the_run_directory_and_says_where(tmp_path, monkeypatch):
    run_dir = str(tmp_path / ("d" * 80) / "run")  # too deep for Ray's sockets: Ray's temp dir is under /tmp
    os.makedirs(run_dir)
    monkeypatch.setattr(ray_engine, "listen_on", lambda address, here: "127.0.0.1")
    monkeypatch.setattr(ray_engine, "_use_token_authentication", lambda local: None)
    monkeypatch.setattr(ray_engine, "node_environment", lambda: {})
    started = {}

    def init_that_fails(temp_dir, wanted, common, host):
        started["temp_dir"] = temp_dir
        _write_session(temp_dir, "session_1", "Check failed: the raylet's own words")
        raise Exception(TIMED_OUT)

    monkeypatch.setattr(ray_engine, "_init_local", init_that_fails)
    with pytest.raises(RuntimeError) as raised:
        ray_engine._start_ray(RayOptions(), run_dir, None)
    logs = os.path.join(run_dir, TEMP_DIR, "session_latest", "logs")
    assert str(raised.value).startswith(f"Ray did not start on this machine: {TIMED_OUT} Its daemons' logs are in "
                                        f"{logs} (raylet.out, gcs_server.out).")
    assert not started["temp_dir"].startswith(run_dir) and not os.path.exists(started["temp_dir"])
    with open(os.path.join(logs, "raylet.out")) as f:  # through the link: it names the copy, not /tmp
        assert f.read() == "Check failed: the raylet's own words"
    assert not os.path.exists(os.path.join(run_dir, TEMP_DIR, "session_1", "sockets"))


def test_a_second_session_kept_in_the_same_run_directory_becomes_the_latest(tmp_path):
    run_dir = str(tmp_path / "run")
    kept = os.path.join(run_dir, TEMP_DIR)
    for name in ("session_1", "session_2"):  # a run, then its resumption
        temp_dir, _ = ray_temp_dir("/" + "d" * 120)
        _write_session(temp_dir, name, name)
        ray_engine._keep_temp_dir(temp_dir, run_dir)
        assert not os.path.exists(temp_dir)
        assert os.readlink(os.path.join(kept, "session_latest")) == name  # relative: the run directory can move
    with open(os.path.join(kept, "session_latest", "logs", "raylet.out")) as f:
        assert f.read() == "session_2"
    assert sorted(os.listdir(kept)) == ["session_1", "session_2", "session_latest"]
