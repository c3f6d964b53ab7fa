"""IMPALA learns CartPole-v1 (fixed seeds): single-process, and as a local_mp program with 2 actors.

Both run only with ACMELIKE_LONG_TESTS=1. Measured: single-process 416 at 80.2k steps, local_mp evaluator 417 at
61.5k; but a later single-process run of the same seed stayed near 157 (best 260) at 155k steps, so IMPALA is not
yet reliable enough across runs to gate CI on (issue 10 stays open for it).
"""

import json
import os

import pytest

from program_launcher import Launcher, line_after
from stack import require

from launch.registry import make_experiment_config

TARGET = 400.0
BUDGET = 300_000


LONG = pytest.mark.skipif(os.environ.get("ACMELIKE_LONG_TESTS") != "1", reason="long: set ACMELIKE_LONG_TESTS=1 to run")


@LONG
def test_impala_learns_cartpole_single_process(tmp_path):
    require("reverb")
    from launch import run_single_process

    config = make_experiment_config(
        agent="impala", environment="CartPole-v1", max_num_actor_steps=BUDGET, seed=0, run_dir=str(tmp_path),
        stop_at_average_return=TARGET, progress_period_s=30.0,
    )
    summary = run_single_process(config)
    print(json.dumps(summary))
    assert summary["average_return_last_20"] >= TARGET, summary
    assert summary["env_steps"] <= BUDGET + 500, summary


@LONG
def test_impala_learns_cartpole_as_a_local_mp_program(tmp_path):
    require("launchpad")
    launcher = Launcher(
        "learn", "--agent", "impala", "--launch", "local_mp", "--actors", 2, "--steps", BUDGET,
        "--eval-every", 10_000, "--stop-at-return", TARGET, run_dir=tmp_path,
    )
    assert launcher.wait(timeout=900) == 0, launcher.output[-5000:]
    summary = json.loads(line_after(launcher.output, "DISTRIBUTED "))
    print(json.dumps(summary))
    assert summary["average_evaluator_return"] >= TARGET, summary
    assert summary["env_steps"] <= BUDGET + 2_000, summary
    assert launcher.left_behind() == []
