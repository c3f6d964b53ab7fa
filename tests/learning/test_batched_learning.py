"""Batched acting learns: PPO with --num-envs 8 through the single-process runner (fixed seed); and every
registered agent trains batched through the same construction path (smoke runs on fake environments)."""

import json

import pytest
from stack import require

require("reverb")  # agents train through an in-process Reverb server

from fakes import fake_environment_factory  # noqa: E402

from launch import make_experiment_config, run_single_process  # noqa: E402
from launch.registry import agent_definition, online_agents  # noqa: E402

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


# Multi-agent agents act for several agents in one environment per actor: --num-envs above 1 is refused for them
# with a message (tests/agents/test_multiagent.py).
@pytest.mark.parametrize("name", [name for name in online_agents() if not agent_definition(name).multiagent])
def test_every_registered_agent_trains_batched_on_fake_environments(name, tmp_path):
    """--num-envs for every agent: four fake environments stepped together (BatchedEnvironments), smoke config."""
    definition = agent_definition(name)
    overrides = [
        f"{key}={','.join(map(str, v)) if isinstance(v, tuple) else v}" for key, v in definition.smoke_config.items()
    ]
    config = make_experiment_config(
        agent=name, environment="fake", max_num_actor_steps=400, seed=0, run_dir=str(tmp_path),
        environment_factory=fake_environment_factory(definition.action_space), config_overrides=overrides,
        progress_period_s=60.0, num_envs=4,
    )
    summary = run_single_process(config)
    assert summary["env_steps"] >= 400, summary
    assert summary["learner_steps"] > 0, f"{name}'s learner never stepped batched: {summary}"
