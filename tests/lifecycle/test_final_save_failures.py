"""No swallowed saves: a final checkpoint or snapshot that fails reaches `<run_dir>/failures/`, the summary's
`failures` and the exit code (1), in a single-process run, an offline run and a distributed program's nodes."""

import json
import os
import threading

import pytest
from stack import require

from acmelike.checkpointing import Checkpointer
from launch.cli.train import main


def _failing_save(self, step, **metadata):
    raise OSError(f"No space left on device (checkpoint {step})")


def _check_the_failure_is_reported(code: int, stdout: str, run_dir) -> None:
    assert code == 1
    summary = json.loads(stdout.rstrip("\n").splitlines()[-1])  # the summary is still the last line
    (failure,) = summary["failures"]
    assert failure["name"] == "final_save" and "No space left on device" in failure["error"]
    text = (run_dir / "failures" / "final_save.txt").read_text()
    assert "the final save" in text and "Traceback" in text and "No space left on device" in text
    assert json.loads((run_dir / "summary.json").read_text())["failures"] == summary["failures"]


def test_a_single_process_run_whose_final_save_fails_says_so_and_exits_1(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(Checkpointer, "save", _failing_save)
    run_dir = tmp_path / "run"
    code = main(["--agent", "dqn", "--env", "CartPole-v1", "--steps", "200", "--config", "min_replay_size=50",
                 "--run-dir", str(run_dir), "--progress-seconds", "60"])
    _check_the_failure_is_reported(code, capsys.readouterr().out, run_dir)


def test_an_offline_run_whose_final_save_fails_says_so_and_exits_1(tmp_path, capsys, monkeypatch):
    require("minari")
    from launch.cli.record import record

    monkeypatch.setenv("MINARI_DATASETS_PATH", str(tmp_path / "minari"))
    record(dataset_id="cartpole/random-v0", episodes=2, environment="CartPole-v1", seed=0)
    monkeypatch.setattr(Checkpointer, "save", _failing_save)
    run_dir = tmp_path / "run"
    code = main(["--agent", "bc", "--env", "CartPole-v1", "--dataset", "cartpole/random-v0", "--steps", "10",
                 "--eval-every", "0", "--config", "hidden_sizes=8", "--run-dir", str(run_dir)])
    _check_the_failure_is_reported(code, capsys.readouterr().out, run_dir)


def test_a_run_directory_that_takes_nothing_more_still_gets_its_summary_printed(tmp_path, capsys, monkeypatch):
    require("minari")
    from launch.cli.record import record
    from launch.lifecycle import checkpoints

    def read_only(*args, **kwargs):
        raise PermissionError("[Errno 30] Read-only file system")

    monkeypatch.setenv("MINARI_DATASETS_PATH", str(tmp_path / "minari"))
    record(dataset_id="cartpole/random-v0", episodes=2, environment="CartPole-v1", seed=0)
    monkeypatch.setattr(Checkpointer, "save", read_only)
    monkeypatch.setattr(checkpoints, "write_summary", read_only)
    code = main(["--agent", "bc", "--env", "CartPole-v1", "--dataset", "cartpole/random-v0", "--steps", "10",
                 "--eval-every", "0", "--config", "hidden_sizes=8", "--run-dir", str(tmp_path / "run")])
    assert code == 1
    summary = json.loads(capsys.readouterr().out.rstrip("\n").splitlines()[-1])
    assert [failure["name"] for failure in summary["failures"]] == ["final_save", "summary"]
    assert all("Read-only file system" in failure["error"] for failure in summary["failures"])


def _program(stopping: bool):
    """A program as its nodes see it (`launch.engines.distributed.runtime`), stopping or running."""
    from launch.engines.distributed import runtime

    stop = threading.Event()
    if stopping:
        stop.set()
    runtime.install(runtime.Runtime(lambda: stop, stop.set, "test"))
    yield
    runtime.install(None)


@pytest.fixture()
def stopping_program():
    yield from _program(stopping=True)


@pytest.fixture()
def running_program():
    yield from _program(stopping=False)


def test_a_final_save_that_fails_while_the_program_stops_is_reported(tmp_path, stopping_program):
    from launch.engines.distributed.nodes import report_failures

    with pytest.raises(OSError, match="read-only file system"):
        with report_failures("learner", str(tmp_path), final_save=True):
            raise OSError("read-only file system")
    text = (tmp_path / "failures" / "learner.txt").read_text()
    assert "final save failed" in text and "Traceback" in text and "read-only file system" in text


def test_what_shutdown_cuts_off_is_still_swallowed_while_stopping(tmp_path, stopping_program):
    from launch.engines.distributed.nodes import ProgramStopping, report_failures

    with report_failures("learner", str(tmp_path), final_save=True):
        raise ProgramStopping("call to save() abandoned: the program is stopping")
    with report_failures("learner", str(tmp_path), final_save=True):
        raise RuntimeError("UNAVAILABLE: Socket closed")  # a Reverb call to a replay node that has gone
    with report_failures("actor_0", str(tmp_path)):  # not a final save: any error while stopping
        raise ValueError("an episode cut short")
    assert not os.path.exists(tmp_path / "failures")


def test_the_replay_servers_close_is_shutdown_even_before_the_node_sees_the_stop(tmp_path, running_program):
    # The replay node closes its server as the program stops; an actor's flush can hear that before its own stop
    # event is set (a Ray run's resumed actor once failed the run this way).
    from acmelike.replay.remote import ReplayClosed
    from launch.engines.distributed.nodes import report_failures

    with report_failures("actor_0", str(tmp_path)):
        raise ReplayClosed("the replay server was closed before it took 2 of this writer's items")
    assert not os.path.exists(tmp_path / "failures")
    with pytest.raises(RuntimeError, match="Socket closed"):  # without the stop, a call cut off is a failure
        with report_failures("actor_0", str(tmp_path)):
            raise RuntimeError("UNAVAILABLE: Socket closed")
    assert "Socket closed" in (tmp_path / "failures" / "actor_0.txt").read_text()
