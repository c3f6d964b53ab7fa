"""Each agent, through its builder and the single-process runner, learns CartPole-v1 (fixed seeds).

Learning tests run on the seeded local replay (`replay="local"`): the same tables, adders, datasets and update
steps as on Reverb, but each run is bit-identical to the last, so a pass is not luck of the sampling, and a step
costs less (DQN to 400: 42.7 s against 102.5 s on Reverb, one run each on a loaded 2-core machine).
"""

import csv
import json
import os

import pytest
from stack import DQN_EXPERT_GROUP, require

from launch import make_experiment_config, run_single_process  # noqa: E402

TARGET = 400.0


@pytest.mark.parametrize("agent, budget", [
    pytest.param("dqn", 100_000, marks=DQN_EXPERT_GROUP),  # the run the offline tests record (tests/conftest.py)
    ("ppo", 300_000),
])
def test_agent_learns_cartpole(agent, budget, tmp_path, request):
    if agent == "dqn":
        run_dir, summary = request.getfixturevalue("dqn_cartpole_expert")
    else:
        run_dir = tmp_path
        config = make_experiment_config(
            agent=agent, environment="CartPole-v1", max_num_actor_steps=budget, seed=0, run_dir=str(run_dir),
            stop_at_average_return=TARGET, progress_period_s=30.0, replay="local",
        )
        summary = run_single_process(config)
    print(json.dumps(summary))
    assert summary["average_return_last_20"] >= TARGET, summary
    assert summary["threshold"] == 475.0  # CartPole-v1's reward_threshold, from gymnasium
    assert summary["env_steps"] <= budget + 500, summary  # at most one CartPole episode past the budget
    assert summary["learner_steps"] > 0
    # What a person looks at after a run: CSV logs, a learning curve, the summary.
    with open(run_dir / "actor.csv") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == summary["episodes"] and float(rows[-1]["actor_steps"]) == summary["env_steps"]
    assert os.path.getsize(run_dir / "learning_curve.png") > 1000
    assert json.loads((run_dir / "summary.json").read_text()) == json.loads(json.dumps(summary))
