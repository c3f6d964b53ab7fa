"""IMPALA learns CartPole-v1 (fixed seeds): single-process, and as a local_mp program with 2 actors.

Single-process on Reverb, seeds 0, 1, 2 reached an average of 400 after 82.4k, 74.9k and 78.0k steps. This test
runs on the seeded local replay (the same run every time), acting in 8 environments at once (--num-envs 8: one
policy call per 8 steps), and stops at 200: seed 0 reaches it after 32.1k steps (70 s of wall time on a loaded
2-core machine; acting in one environment it took 44.1k steps and 110-170 s). 200 sits far above what a broken
update reaches: with each action scored under the next step's logits (an off-by-one bug) the run ends near 9 on
all 3 seeds it was run on (one environment), with learning rate 1e-12 (8 environments) no 20-episode average rose above 37.6 within 100k steps, and random play
averages 22. The defaults were chosen over 5 seeds of the same update (agents/impala/config.py).

The local_mp program runs only with (a by-hand check): without --stop-at-return, 300k steps
with 2 actors ended at an average of 500 (475 first reached at 105.8k steps) in 922 s with the load average at
40-60.
"""

import json

import pytest
from program_launcher import Launcher, line_after
from stack import long_test, require

from launch.experiments.make import make_experiment_config

TARGET = 200.0
BUDGET = 300_000


def test_impala_learns_cartpole_single_process(tmp_path):
    from launch import run_single_process

    config = make_experiment_config(
        agent="impala", environment="CartPole-v1", max_num_actor_steps=BUDGET, seed=0, run_dir=str(tmp_path),
        stop_at_average_return=TARGET, progress_period_s=30.0, num_envs=8,
        replay="local",  # seeded: the same run every time (see tests/learning/test_agents_learning.py)
    )
    summary = run_single_process(config)
    print(json.dumps(summary))
    assert summary["average_return_last_20"] >= TARGET, summary
    assert summary["env_steps"] <= BUDGET + 500, summary


@pytest.mark.classic
@long_test
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
