"""The program graph on Ray: placement on a two-node cluster (and, a long test, DQN learning CartPole there), an
actor killed mid-run is restarted and counted, an injected failure names its node, and signals leave no Ray
process behind.

Ray runs beside Reverb on the full stack only (ray 2.48.0, the newest that resolves beside TensorFlow 2.8). Every
run is a subprocess (tests/program_launcher.py). The two-node cluster is started once for the module; the local
runs (no --ray-address) start and stop Ray themselves.
"""

import json
import os
import signal
import subprocess
import sys
import time

import psutil
import pytest
from program_launcher import Launcher, last_json_line, line_after
from stack import long_test, require

# classic: Ray 2.48 on the classic stack (tests/engines/test_ray_replay.py runs Ray 2.60 on today's). alone: `make
# test-launchpad` runs these before its main part, with nothing beside them: each counts the Ray processes started
# since it began, and under load Ray 2.48 can hand one port to two of its processes on a single-machine cluster
# ("Failed to start the grpc server ... port is already used").
pytestmark = [pytest.mark.classic, pytest.mark.alone]
require("reverb")
require("ray")

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RAY = os.path.join(os.path.dirname(sys.executable), "ray")
RAY_PROCESS_MARKS = ("ray::", "raylet", "gcs_server", "/ray/_private/", "/ray/dashboard/", "/ray/autoscaler/")


def ray_processes(since: float) -> list:
    """Ray's daemons and workers started at or after `since` (a worker renames itself ray::<class>.<method>)."""
    found = []
    for process in psutil.process_iter(["pid", "cmdline", "create_time", "status"]):
        info = process.info
        command = " ".join(info["cmdline"] or [])
        if info["create_time"] >= since - 1 and info["status"] != psutil.STATUS_ZOMBIE:
            if any(mark in command for mark in RAY_PROCESS_MARKS) and process.pid != os.getpid():
                found.append(f"{info['pid']}: {command[:160]}")
    return found


def no_ray_processes_left(since: float, timeout_s: float = 20.0) -> list:
    """Waits up to `timeout_s` for every Ray process started since `since` to exit; returns those still alive."""
    deadline = time.time() + timeout_s
    while ray_processes(since) and time.time() < deadline:
        time.sleep(0.5)
    return ray_processes(since)


def _summary(launcher) -> dict:
    return json.loads(line_after(launcher.output, "DISTRIBUTED "))


def _placements(run_dir) -> dict:
    return json.loads((run_dir / "ray_nodes.json").read_text())


def _placement_of(run_dir, launcher, name: str, timeout: float = 60.0) -> dict:
    """`name`'s entry in ray_nodes.json, once the engine has written it. The engine rewrites the file once a progress
    period, so a node can already be stepping before its start is on record there."""
    deadline = time.time() + timeout
    while time.time() < deadline and launcher.process.poll() is None:
        try:
            return _placements(run_dir)[name]
        except (OSError, ValueError, KeyError):
            time.sleep(0.2)
    pytest.fail(f"{name} never appeared in ray_nodes.json:\n{launcher._read(launcher._stdout)[-3000:]}")


def _wait_for_steps(run_dir, launcher, steps: int, timeout: float) -> None:
    deadline = time.time() + timeout
    while time.time() < deadline and launcher.process.poll() is None:
        try:
            if json.loads((run_dir / "progress.json").read_text()).get("actor_steps", 0) >= steps:
                return
        except (OSError, ValueError):
            pass
        time.sleep(0.2)
    pytest.fail(f"the program never reached {steps} actor steps:\n{launcher._read(launcher._stdout)[-3000:]}")


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """A head node (resource `head`) and a worker node (resource `worker`) on this machine; `ray stop` at the end
    must leave no Ray process."""
    since = time.time()
    temp_dir = tmp_path_factory.mktemp("r")  # short: Ray's unix socket paths live under it
    port = _free_port()
    # Niceness 0: the nodes run at Launchpad's priority (Ray's default, 15, starves them on a loaded machine).
    environment = {**os.environ, "PYTHONPATH": ROOT, "RAY_USAGE_STATS_ENABLED": "0", "RAY_worker_niceness": "0"}
    common = ["--node-ip-address", "127.0.0.1", "--num-cpus", "1", "--disable-usage-stats"]
    # Each node its own range of worker ports: two raylets on one machine otherwise hand out the same default
    # range, and a worker started by one can find its port taken by the other's ("Failed to start the grpc server").
    head = [RAY, "start", "--head", "--port", str(port), "--resources", '{"head": 1}', "--temp-dir", str(temp_dir),
            "--include-dashboard", "false", "--min-worker-port", "23000", "--max-worker-port", "23999", *common]
    worker = [RAY, "start", "--address", f"127.0.0.1:{port}", "--resources", '{"worker": 1}',
              "--min-worker-port", "24000", "--max-worker-port", "24999", *common]
    try:
        for command in (head, worker):
            subprocess.run(command, env=environment, check=True, capture_output=True, timeout=180)
        yield f"127.0.0.1:{port}"
    finally:
        subprocess.run([RAY, "stop", "--force"], env=environment, capture_output=True, timeout=120)
    assert no_ray_processes_left(since) == []


def _free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_resources_parse_and_bad_placements_are_named():
    from launch.engines.distributed.ray_engine import RayOptions, parse_resources, ray_temp_dir

    assert parse_resources("actor=worker, learner=head,learner=gpu:0.5") == {
        "actor": {"worker": 0.01}, "learner": {"head": 0.01, "gpu": 0.5},
    }
    assert parse_resources("") == {}
    for bad in ("actor", "actor=", "=worker", "actor=worker:0", "actor=worker:x"):
        with pytest.raises(ValueError, match="GROUP=RESOURCE"):
            parse_resources(bad)
    with pytest.raises(ValueError, match="max_restarts"):
        RayOptions(max_restarts=-1)
    assert ray_temp_dir("/tmp/run") == ("/tmp/run/ray", False)
    deep, fallback = ray_temp_dir("/tmp/" + "d" * 80)
    assert fallback and len(deep) < 40
    os.rmdir(deep)


PLACEMENT = ("--ray-resources", "actor=worker,learner=head,replay=head")


def _assert_placed_by_resource(where) -> None:
    actors = [name for name in where if name.startswith("actor_")]
    assert where["learner"]["resources"].get("head") and where["replay"]["resources"].get("head"), where
    assert actors and all(where[actor]["resources"].get("worker") for actor in actors), where
    assert all(where["learner"]["node_id"] == where["replay"]["node_id"] != where[actor]["node_id"] for actor in actors)


def test_two_node_cluster_places_nodes_by_resource_and_restarts_a_killed_actor(cluster, tmp_path):
    """One program on the two-node cluster: nodes land where their resources say (the actor on the worker node,
    learner and replay on the head), and the actor, killed mid-run (SIGKILL to its process), is restarted by Ray
    and counted. With one actor, only the restarted actor can bring the run to its budget."""
    # Long enough that the kill lands mid-run: at 3,000 a fast machine ran the whole budget (3,440 steps) between the
    # 200th step being seen and the kill, and the actor's process was gone.
    budget = 10_000
    launcher = Launcher("smoke", "--launch", "ray", "--ray-address", cluster, *PLACEMENT, "--actors", 1,
                        "--steps", budget, run_dir=tmp_path)
    _wait_for_steps(tmp_path, launcher, 200, timeout=400)
    os.kill(_placement_of(tmp_path, launcher, "actor_0")["pid"], signal.SIGKILL)
    assert launcher.wait(timeout=600) == 0, launcher.output[-5000:]
    summary = _summary(launcher)
    assert summary["launch"] == "ray" and summary["ray_address"] == cluster, summary
    assert summary["interrupted"] is False and summary["env_steps"] >= budget, summary
    assert summary["restarts"] == {"actor_0": 1} and _placements(tmp_path)["actor_0"]["restarts"] == 1, summary
    where = _placements(tmp_path)
    assert {"replay", "counter", "learner", "actor_0", "steps_limiter"} <= set(where)
    _assert_placed_by_resource(where)


@long_test  # CI's distributed learning run is local_mp DQN (tests/test_distributed.py)
def test_dqn_learns_cartpole_on_the_two_node_cluster(cluster, tmp_path):
    budget = 100_000
    launcher = Launcher(
        "learn", "--launch", "ray", "--ray-address", cluster, *PLACEMENT,
        "--actors", 2, "--steps", budget, "--eval-every", 10_000, "--stop-at-return", 400, run_dir=tmp_path,
    )
    assert launcher.wait(timeout=900) == 0, launcher.output[-5000:]
    summary = _summary(launcher)
    assert summary["average_evaluator_return"] >= 400, summary
    assert summary["interrupted"] is False and summary["env_steps"] <= budget + 2_000, summary
    where = _placements(tmp_path)
    assert set(where) == {"replay", "counter", "learner", "actor_0", "actor_1", "evaluator", "steps_limiter"}
    _assert_placed_by_resource(where)
    assert (tmp_path / "learning_curve.png").stat().st_size > 1000


def test_injected_failure_stops_the_program_and_names_the_node(cluster, tmp_path):
    launcher = Launcher("fail", "--launch", "ray", "--ray-address", cluster, "--steps", 1_000_000, run_dir=tmp_path)
    assert launcher.wait(timeout=600) == 1, launcher.output[-5000:]
    failure = line_after(launcher.output, "FAILED ")
    assert "actor_0" in failure and "on Ray" in failure, launcher.output[-5000:]
    assert "injected failure after 300 steps" in launcher.output
    assert (tmp_path / "failures" / "actor_0.txt").exists()


# A local Ray run (no --ray-address) from the command line: Ray started here, two actors on this one node, and a
# signal to the launcher ends it with an interrupted summary and no Ray process left. (Running to a budget is the
# cluster test's; one local Ray start-up serves both the smoke and the signal checks.) SIGTERM goes through the
# same handler as Ctrl-C; it is a long test.
@pytest.mark.parametrize(
    "signal_number, code", [(signal.SIGINT, 130), pytest.param(signal.SIGTERM, 143, marks=long_test)],
    ids=["SIGINT", "SIGTERM"],
)
def test_local_ray_run_stops_on_a_signal_and_leaves_no_ray_process(signal_number, code, tmp_path):
    since = time.time()
    run_dir = tmp_path / "run"
    launcher = Launcher("--agent", "dqn", "--env", "CartPole-v1", "--launch", "ray", "--actors", 2,
                        "--steps", 1_000_000, "--progress-seconds", 1, run_dir=run_dir, command_line=True,
                        separate_stderr=True)
    _wait_for_steps(run_dir, launcher, 300, timeout=400)
    launcher.process.send_signal(signal_number)
    assert launcher.wait(timeout=120) == code, (launcher.output[-3000:], launcher.errors[-3000:])
    summary = last_json_line(launcher.output)
    assert summary["interrupted"] is True and summary["signal"] == signal.Signals(signal_number).name
    assert summary["env_steps"] >= 300 and summary["ray_address"] == "local" and summary["ray_init_seconds"] > 0
    # Checkpointed before the hosts stopped (none was due before): the counts at that moment name it.
    (checkpoint,) = [path for path in (run_dir / "checkpoints").iterdir() if path.name.isdigit()]
    assert (checkpoint / "arrays").is_dir() and (checkpoint / "replay").is_dir()
    counts = json.loads((checkpoint / "counter.json").read_text())
    assert 300 <= counts["actor_steps"] == int(checkpoint.name) <= summary["env_steps"]
    placements = _placements(run_dir)
    assert {"actor_0", "actor_1", "learner", "replay"} <= set(placements)
    assert len({where["node_id"] for where in placements.values()}) == 1
    # pytest's run directory is too deep for Ray's unix sockets: its temp dir was moved into the run dir at the end.
    assert "too deep for Ray's unix sockets" in launcher.output + launcher.errors
    assert list((run_dir / "ray").glob("session_*/logs"))
    assert launcher.left_behind() == [] and no_ray_processes_left(since) == []
