"""IPPO and MAPPO, through their builder and the single-process runner, beat random play on MPE simple_spread.

The return is the team's: the sum of the three agents' returns over an episode of 25 steps (PettingZoo's
simple_spread_v3, local_ratio 0.5). Random play (uniform actions) returns -78.0 on average (std 23.1 per episode,
400 episodes); over the 381 windows of 20 consecutive random episodes the average stays between -89.3 and -68.7.
The target, -60 over 20 episodes, is far outside that range. Seeded local replay: each run is the same run.

MAPPO's run is a long test: CI checks MAPPO's update step learning in the fully jitted mode
(tests/engines/test_anakin_multiagent.py, on the latest stack), and IPPO's here, which shares MAPPO's actor, adder
and learner shell.
"""

import csv
import json

import pytest
from stack import long_test, require

pytest.importorskip("mpe2")

from launch import make_experiment_config, run_single_process  # noqa: E402

TARGET = -60.0
BUDGET = 60_000


@pytest.mark.parametrize("agent", ["ippo", pytest.param("mappo", marks=long_test)])
def test_agent_beats_random_play_on_simple_spread(agent, tmp_path):
    config = make_experiment_config(
        agent=agent, environment="mpe/simple_spread_v3", max_num_actor_steps=BUDGET, seed=0, run_dir=str(tmp_path),
        stop_at_average_return=TARGET, progress_period_s=30.0, replay="local",
    )
    summary = run_single_process(config)
    print(json.dumps(summary))
    assert summary["average_return_last_20"] >= TARGET, summary
    # What a person sees: the team's return and each agent's, per episode.
    with open(tmp_path / "actor.csv") as f:
        rows = list(csv.DictReader(f))
    agents = [f"episode_return/agent_{i}" for i in range(3)]
    assert len(rows) == summary["episodes"] and set(agents) <= set(rows[0])
    assert float(rows[-1]["episode_return"]) == pytest.approx(sum(float(rows[-1][a]) for a in agents), abs=1e-3)
