"""Stops keep work in a distributed run: Ctrl-C checkpoints the learner, replay and counts before the nodes stop,
and `--resume` goes on from that checkpoint; a local_mp actor killed from outside is restarted (as Ray restarts
one), and another node killed is named in the summary and in `<run_dir>/failures/`.

Ctrl-C is SIGINT to the launcher's whole process group, as a terminal sends it (the node processes leave that
group, so it reaches the launcher alone). The Ctrl-C test of the main run, with its checkpoint at the stop, is
tests/engines/test_interrupts.py's; the stop-and-resume round trip here is long (two local_mp start-ups).
"""

import json
import os
import signal

from program_launcher import Launcher, last_json_line
import pytest
from stack import long_test, require

pytestmark = pytest.mark.classic
require("launchpad")

from run_helpers import SMALL_DQN  # noqa: E402

STEPS = 8_000


def _checkpoints(run_dir):
    directory = os.path.join(run_dir, "checkpoints")
    return sorted(os.path.join(directory, name) for name in os.listdir(directory) if name.isdigit())


def _read(path):
    with open(path) as f:
        return json.load(f)


def _actor_steps(run_dir, key="actor_steps"):
    try:
        return int(_read(os.path.join(run_dir, "progress.json")).get(key, 0))
    except (OSError, ValueError):
        return 0


def _learning(run_dir):
    """Past the learner's first (jitted) step: a stop while it compiles can outlast Launchpad's 10 s grace."""
    return _actor_steps(run_dir, "learner_steps") > 0


@long_test
def test_ctrl_c_of_local_mp_checkpoints_at_the_stop_and_resume_goes_on_from_it(tmp_path):
    run_dir = str(tmp_path / "run")
    args = ("--agent", "dqn", "--env", "CartPole-v1", "--launch", "local_mp", "--actors", 1, "--steps", STEPS,
            "--progress-seconds", 0.5, *SMALL_DQN)
    first = Launcher(*args, run_dir=run_dir, command_line=True, own_process_group=True, separate_stderr=True)
    first.wait_until(lambda: _actor_steps(run_dir) >= 1_500, timeout=300, what="1,500 actor steps")
    at_signal = _actor_steps(run_dir)
    first.signal_group(signal.SIGINT)
    assert first.wait(timeout=120) == 130, (first.output + first.errors)[-4000:]
    stopped = last_json_line(first.output)
    assert stopped["interrupted"] is True and stopped["failures"] == []
    (checkpoint,) = _checkpoints(run_dir)  # none was due (10-minute period): this one is the stop's
    step = int(os.path.basename(checkpoint))
    assert _read(os.path.join(checkpoint, "counter.json"))["actor_steps"] == step  # the counts at that moment
    assert at_signal <= step <= stopped["env_steps"] < STEPS, (at_signal, step, stopped)
    assert os.path.isdir(os.path.join(checkpoint, "replay")) and os.path.isdir(os.path.join(checkpoint, "arrays"))
    assert f"checkpoint {checkpoint} written" in first.output
    assert first.left_behind() == []

    resumed = Launcher("--resume", run_dir, run_dir=run_dir, command_line=True, separate_stderr=True)
    assert resumed.wait(timeout=400) == 0, (resumed.output + resumed.errors)[-4000:]
    restored = _read(os.path.join(run_dir, "resumed.json"))
    assert restored["checkpoint"] == checkpoint and restored["step"] == step
    assert restored["counts"]["actor_steps"] == step and restored["replay_sizes"]["priority_table"] > 0
    finished = last_json_line(resumed.output)
    assert finished["interrupted"] is False and finished["env_steps"] >= STEPS
    assert resumed.left_behind() == []


def _local_mp(run_dir, *extra):
    return Launcher("--agent", "dqn", "--env", "CartPole-v1", "--launch", "local_mp", "--actors", 2,
                    "--steps", 1_000_000, "--progress-seconds", 0.5, *SMALL_DQN, *extra, run_dir=run_dir,
                    command_line=True, separate_stderr=True)


def test_a_killed_local_mp_node_that_cannot_restart_is_named_in_the_summary_and_failures(tmp_path):
    run_dir = tmp_path / "run"
    launcher = _local_mp(run_dir)
    launcher.wait_until(lambda: _learning(str(run_dir)), timeout=300, what="the first learner steps")
    pids = _read(run_dir / "node_processes.json")
    assert {"actor_0", "actor_1", "counter", "learner", "replay", "steps_limiter"} <= set(pids), pids
    os.kill(pids["steps_limiter"], signal.SIGKILL)
    assert launcher.wait(timeout=90) == 1, (launcher.output + launcher.errors)[-4000:]
    summary = last_json_line(launcher.output)
    assert [failure["name"] for failure in summary["failures"]] == ["steps_limiter"], summary["failures"]
    assert summary["restarts"] == {}
    text = (run_dir / "failures" / "steps_limiter.txt").read_text()
    assert f"process {pids['steps_limiter']}" in text and "SIGKILL" in text
    assert "steps_limiter" in launcher.errors and "unknown node" not in launcher.errors
    assert launcher.left_behind() == []


@long_test
def test_a_killed_local_mp_actor_is_restarted_and_acts_again(tmp_path):
    run_dir = tmp_path / "run"
    launcher = _local_mp(run_dir)
    launcher.wait_until(lambda: _learning(str(run_dir)), timeout=300, what="the first learner steps")
    killed = _read(run_dir / "node_processes.json")["actor_1"]
    os.kill(killed, signal.SIGKILL)
    launcher.wait_until(lambda: _read(run_dir / "node_processes.json")["actor_1"] != killed, timeout=30,
                        what="actor_1's restart")
    restarted = _read(run_dir / "node_processes.json")["actor_1"]
    log = run_dir / "actor_1.csv"
    after_restart = os.path.getmtime(log)
    launcher.wait_until(lambda: os.path.getmtime(log) > after_restart + 1, timeout=240,
                        what="an episode of the restarted actor_1")
    assert os.path.exists(f"/proc/{restarted}")
    launcher.process.send_signal(signal.SIGTERM)
    assert launcher.wait(timeout=120) == 143, (launcher.output + launcher.errors)[-4000:]
    summary = last_json_line(launcher.output)
    assert summary["restarts"] == {"actor_1": 1} and summary["failures"] == []
    assert f"node 'actor_1' (process {killed}) was killed by SIGKILL: restarting it (1 of 3)" in launcher.output
    assert launcher.left_behind() == []
