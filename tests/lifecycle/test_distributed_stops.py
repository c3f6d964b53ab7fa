"""Stops keep work in a distributed run: Ctrl-C checkpoints the learner, replay and counts before the nodes stop,
and `--resume` goes on from that checkpoint; a local_mp node killed from outside is named in the summary and in
`<run_dir>/failures/`.

Ctrl-C is SIGINT to the launcher's whole process group, as a terminal sends it (the node processes leave that
group, so it reaches the launcher alone). The Ctrl-C test of the main run, with its checkpoint at the stop, is
tests/engines/test_interrupts.py's; the stop-and-resume round trip here is long (two local_mp start-ups).
"""

import json
import os
import signal

from program_launcher import Launcher, last_json_line
from stack import long_test, require

require("launchpad")

from run_helpers import SMALL_DQN  # noqa: E402

STEPS = 8_000


def _checkpoints(run_dir):
    directory = os.path.join(run_dir, "checkpoints")
    return sorted(os.path.join(directory, name) for name in os.listdir(directory) if name.isdigit())


def _read(path):
    with open(path) as f:
        return json.load(f)


def _actor_steps(run_dir):
    try:
        return int(_read(os.path.join(run_dir, "progress.json")).get("actor_steps", 0))
    except (OSError, ValueError):
        return 0


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


def test_a_killed_local_mp_actor_is_named_in_the_summary_and_failures(tmp_path):
    run_dir = tmp_path / "run"
    launcher = Launcher("--agent", "dqn", "--env", "CartPole-v1", "--launch", "local_mp", "--actors", 2,
                        "--steps", 1_000_000, "--progress-seconds", 0.5, *SMALL_DQN, run_dir=run_dir,
                        command_line=True, separate_stderr=True)
    launcher.wait_until(lambda: _actor_steps(str(run_dir)) > 0, timeout=300, what="the first actor steps")
    pids = _read(run_dir / "node_processes.json")
    assert {"actor_0", "actor_1", "counter", "learner", "replay", "steps_limiter"} <= set(pids), pids
    os.kill(pids["actor_1"], signal.SIGKILL)
    assert launcher.wait(timeout=90) == 1, (launcher.output + launcher.errors)[-4000:]
    summary = last_json_line(launcher.output)
    assert [failure["name"] for failure in summary["failures"]] == ["actor_1"], summary["failures"]
    text = (run_dir / "failures" / "actor_1.txt").read_text()
    assert f"process {pids['actor_1']}" in text and "SIGKILL" in text
    assert "actor_1" in launcher.errors and "unknown node" not in launcher.errors
    assert launcher.left_behind() == []

