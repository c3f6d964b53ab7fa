"""MPO learns Pendulum-v1 (seed 0, single process, seeded local replay) with its default config.

The run stops as soon as the last 10 episodes average -250 (a random policy averages about -1200, a policy that
never learns to swing up stays below -700), so CI pays only for the steps learning takes. Measured with these
settings (see agents/mpo/README.md): -250 after 6,600 environment steps (70 s, SAC's test 80 s);
with the E-step's weights replaced by uniform ones (no policy improvement) no 10-episode average rose above -1,120
in 12k steps.
"""

import json

from stack import require

require("reverb")

from launch import make_experiment_config, run_single_process  # noqa: E402

TARGET = -250.0
WINDOW = 10
BUDGET = 20_000


def test_mpo_learns_pendulum():
    config = make_experiment_config(
        agent="mpo",
        environment="Pendulum-v1",
        max_num_actor_steps=BUDGET,
        seed=0,
        stop_at_average_return=TARGET,
        return_window=WINDOW,
        target_return=TARGET,
        progress_period_s=60.0,
        replay="local",  # seeded: the same run every time (see tests/learning/test_agents_learning.py)
    )
    summary = run_single_process(config)
    print(json.dumps(summary))
    assert summary[f"average_return_last_{WINDOW}"] >= TARGET, summary
    assert summary["steps_to_threshold"] is not None and summary["steps_to_threshold"] <= BUDGET, summary
    assert summary["learner_steps"] > 0
