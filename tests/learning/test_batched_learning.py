"""Batched acting learns: PPO with --num-envs 8 through the single-process runner (fixed seed). Every registered
agent's smoke run acts batched (tests/agents/test_registry.py)."""

import json

from stack import require

from launch import make_experiment_config, run_single_process  # noqa: E402

TARGET = 400.0


def test_ppo_with_eight_environments_learns_cartpole(tmp_path):
    config = make_experiment_config(
        agent="ppo",
        environment="CartPole-v1",
        max_num_actor_steps=100_000,
        seed=0,
        run_dir=str(tmp_path),
        stop_at_average_return=TARGET,
        progress_period_s=30.0,
        num_envs=8,
        replay="local",  # seeded; UnbatchedIterator.ready() over a synchronous dataset
    )
    summary = run_single_process(config)
    print(json.dumps(summary))
    assert summary["average_return_last_20"] >= TARGET, summary
    assert summary["learner_steps"] > 0
