"""docs/own-loop.md's code (docs/own_loop/own_loop.py, run as it is): DQN's builder pieces in a loop of one's own,
on either replay, learn CartPole-v1 a little and exit with no traceback, Reverb's server and dataset included.

Measured on the 2-core machine (6k steps, seed 0): the local replay's evaluation averages 227 (the same run every
time), Reverb's 437 in one run; with learning_rate=1e-12 (learning nothing) the evaluation averages 53.
"""

import os
import pathlib
import subprocess
import sys

import pytest
from program_launcher import last_json_line
from stack import require

SCRIPT = pathlib.Path(__file__).resolve().parents[2] / "docs" / "own_loop" / "own_loop.py"
STEPS = 6_000
TARGET = 150.0  # the greedy policy's average over 5 evaluation episodes


def run_own_loop(tmp_path, replay: str) -> dict:
    result = subprocess.run([sys.executable, str(SCRIPT), "--replay", replay, "--steps", str(STEPS)], cwd=tmp_path,
                            capture_output=True, text=True, timeout=600, check=False, env=dict(os.environ))
    assert result.returncode == 0, (result.stdout + result.stderr)[-5000:]
    assert "Traceback" not in result.stderr, result.stderr[-5000:]  # nothing goes wrong at exit either
    summary = last_json_line(result.stdout)
    assert summary["steps"] >= STEPS and summary["learner_steps"] > 0, summary
    assert summary["evaluation_return"] >= TARGET, (
        f"the own loop's DQN averaged {summary['evaluation_return']} over its evaluation episodes after "
        f"{summary['steps']} steps; it should reach {TARGET} (learning nothing: about 53): {summary}"
    )
    assert os.listdir(tmp_path) == [], os.listdir(tmp_path)  # it writes nothing
    return summary


def test_the_own_loop_learns_on_the_local_replay(tmp_path):
    run_own_loop(tmp_path, "local")


@pytest.mark.classic
def test_the_own_loop_learns_on_reverb_and_shuts_down_cleanly(tmp_path):
    require("reverb")
    run_own_loop(tmp_path, "reverb")
