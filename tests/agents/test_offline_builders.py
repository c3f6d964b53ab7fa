"""Offline agents as in Acme: their builders implement the smaller `OfflineBuilder` (no replay, adders or stubs), and
their data comes from the experiment's `dataset_factory`, any iterator of batches (Minari's is one)."""

import functools

import jax
import pytest

from fakes import random_transition_batches

from acmelike.builders import ActorLearnerBuilder, OfflineBuilder
from acmelike.specs import make_environment_spec
from acmelike.wrappers import make_gymnasium_environment
from launch.experiments.config import OfflineExperimentConfig
from launch.registry import agent_definition, offline_agents, online_agents


def test_offline_agents_build_on_the_offline_base_and_online_agents_on_the_full_one():
    for name in offline_agents():
        definition = agent_definition(name)
        builder = definition.make_builder(definition.config_class())
        assert isinstance(builder, OfflineBuilder) and not isinstance(builder, ActorLearnerBuilder), name
        assert not hasattr(builder, "make_adder") and not hasattr(builder, "make_replay_tables"), name
    for name in online_agents():
        definition = agent_definition(name)
        assert isinstance(definition.make_builder(definition.config_class()), ActorLearnerBuilder), name


# CartPole-v1's spaces: [4] float32 observations, two discrete actions.
_CARTPOLE_SPEC = make_environment_spec(make_gymnasium_environment("CartPole-v1", seed=0))


def _bc_config(**changes) -> OfflineExperimentConfig:
    from acmelike.wrappers import make_gymnasium_environment
    from agents.bc import BCBuilder, BCConfig, make_networks

    agent_config = BCConfig(batch_size=8, num_sgd_steps_per_step=1, hidden_sizes=(8,))
    fields = dict(
        builder=BCBuilder(agent_config),
        environment_factory=functools.partial(make_gymnasium_environment, "CartPole-v1"),
        network_factory=functools.partial(make_networks, config=agent_config),
        dataset_factory=functools.partial(random_transition_batches, _CARTPOLE_SPEC, 8),
        dataset="made-up",
        max_num_learner_steps=6,
        evaluation_every=3,
        num_evaluation_episodes=1,
        agent="bc",
        environment="CartPole-v1",
    )
    return OfflineExperimentConfig(**{**fields, **changes})


def test_an_offline_run_learns_from_whatever_its_dataset_factory_makes(tmp_path):
    from launch.engines.offline import run_offline

    summary = run_offline(_bc_config(run_dir=str(tmp_path)))
    assert summary["dataset"] == "made-up" and summary["learner_steps"] == 6
    assert [step for step, _ in summary["evaluations"]] == [3, 6] and summary["failures"] == []
    assert (tmp_path / "snapshots").is_dir() and (tmp_path / "checkpoints" / "000000000006").is_dir()


def test_the_evaluator_actor_of_an_offline_agent_comes_from_agent_parts():
    from acmelike.variables import StaticVariableSource
    from launch.experiments.parts import AgentParts

    parts = AgentParts(_bc_config())
    params = parts.networks.policy_network.init(jax.random.PRNGKey(0))
    actor = parts.evaluator_actor(variable_source=StaticVariableSource({"policy": params}))
    environment = parts.evaluator_environment()
    timestep = environment.reset()
    actor.observe_first(timestep)
    assert int(actor.select_action(timestep.observation)) in (0, 1)


@pytest.mark.parametrize("changes, message", [
    ({"max_num_learner_steps": 0}, r"OfflineExperimentConfig.max_num_learner_steps = 0; it must be >= 1"),
    ({"evaluation_every": -1}, r"OfflineExperimentConfig.evaluation_every = -1; it must be >= 0"),
    ({"dataset": ""}, r"OfflineExperimentConfig.dataset = ''"),
    ({"evaluation_every": 0, "stop_at_average_return": 100.0},
     r"stop_at_average_return = 100.0 needs evaluation_every > 0"),
])
def test_offline_experiment_configs_name_the_field_that_is_wrong(changes, message):
    with pytest.raises(ValueError, match=message):
        _bc_config(**changes)
