"""Ctrl-C and SIGTERM end a run properly: a summary marked interrupted, a non-zero exit, a JSON last line, nothing
left running, in one process and as a local_mp program signalled the way a terminal signals it (the whole group)."""

import json
import signal

import pytest
from program_launcher import Launcher, last_json_line
from stack import require


@pytest.mark.parametrize("signal_number, code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)], ids=["SIGINT", "SIGTERM"])
def test_signal_ends_a_single_process_run_with_an_interrupted_summary(signal_number, code, tmp_path):
    run_dir = tmp_path / "run"
    launcher = Launcher("--agent", "dqn", "--env", "CartPole-v1", "--steps", 1_000_000, "--progress-seconds", 0.5,
                        run_dir=run_dir, command_line=True, own_process_group=True, separate_stderr=True)
    launcher.wait_until((run_dir / "actor.csv").exists, timeout=180, what="actor.csv")
    launcher.signal_group(signal_number)
    assert launcher.wait(timeout=60) == code, launcher.errors[-3000:]
    assert "Traceback" not in launcher.errors
    summary = last_json_line(launcher.output)
    assert summary["interrupted"] is True and summary["signal"] == signal.Signals(signal_number).name
    assert 0 < summary["env_steps"] < 1_000_000
    assert json.loads((run_dir / "summary.json").read_text())["interrupted"] is True
    assert (run_dir / "learning_curve.png").exists()
    assert launcher.left_behind() == []


def _actor_steps(run_dir) -> int:
    try:
        return int(json.loads((run_dir / "progress.json").read_text()).get("actor_steps", 0))
    except (OSError, ValueError):
        return 0


@pytest.mark.classic
def test_ctrl_c_to_the_process_group_stops_a_local_mp_program_within_the_grace_period(tmp_path):
    require("launchpad")
    run_dir = tmp_path / "run"
    launcher = Launcher("--agent", "dqn", "--env", "CartPole-v1", "--launch", "local_mp", "--actors", 2,
                        "--steps", 1_000_000, "--progress-seconds", 1, run_dir=run_dir, command_line=True,
                        own_process_group=True, separate_stderr=True)
    launcher.wait_until(lambda: _actor_steps(run_dir) > 0, timeout=240, what="the first actor steps")
    launcher._record()
    launcher.signal_group(signal.SIGINT)
    code = launcher.wait(timeout=90)
    assert code == 130, (code, launcher.output[-3000:], launcher.errors[-3000:])  # not 137: nothing was SIGKILLed
    summary = last_json_line(launcher.output)
    assert summary["interrupted"] is True and summary["launch"] == "local_mp"
    # Checkpointed at the stop, as one process is (none was due before it; actors had stepped): the learner's
    # state, the replay, and the counts at that moment, which name the checkpoint.
    (checkpoint,) = [path for path in (run_dir / "checkpoints").iterdir() if path.name.isdigit()]
    assert (checkpoint / "arrays").is_dir() and (checkpoint / "replay").is_dir()
    counts = json.loads((checkpoint / "counter.json").read_text())
    assert 0 < counts["actor_steps"] == int(checkpoint.name) <= summary["env_steps"]
    assert launcher.left_behind() == []
