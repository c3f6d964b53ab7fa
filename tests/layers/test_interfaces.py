"""The interfaces fail loudly when incomplete, and builders derive what they store from the policy."""

import jax.numpy as jnp
import numpy as np
import pytest
from dm_env import specs

from acmelike import core
from acmelike.adders.base import Adder
from acmelike.builders import policy_extras_spec


@pytest.mark.parametrize(
    "interface, implemented",
    [
        (core.Actor, ("select_action", "observe_first", "observe")),  # forgets update
        (core.VariableSource, ()),
        (core.Learner, ("get_variables",)),  # forgets step
        (core.Saveable, ("save",)),
        (core.Worker, ()),
        (Adder, ("add_first", "add", "reset", "close")),  # forgets interrupt
    ],
)
def test_an_implementation_that_forgets_a_method_fails_when_built(interface, implemented):
    incomplete = type("Incomplete", (interface,), {name: lambda self, *a, **k: None for name in implemented})
    with pytest.raises(TypeError, match="abstract"):
        incomplete()


def _spec():
    from acmelike.specs import EnvironmentSpec

    return EnvironmentSpec(
        observations=specs.Array((4,), np.float32, "observation"),
        actions=specs.DiscreteArray(2, dtype=np.int32, name="action"),
        rewards=specs.Array((), np.float32),
        discounts=specs.BoundedArray((), np.float32, 0.0, 1.0),
    )


def _with_extra_field(policy):
    """The same policy, also reporting the greedy Q-value's sign as an extras field (a new field, nothing else)."""
    from acmelike.actors import ActorCore

    return ActorCore(
        init=policy.init,
        select_action=policy.select_action,
        get_extras=lambda state: {"clock": jnp.asarray(state.steps, jnp.int32), "flag": jnp.zeros((3,), jnp.float32)},
        on_episode_start=policy.on_episode_start,
    )


def test_extras_spec_is_derived_from_the_policy():
    from agents.ppo import PPOConfig, make_networks
    from agents.ppo.builder import PPOBuilder

    builder = PPOBuilder(PPOConfig())
    policy = builder.make_policy(networks=make_networks(_spec(), PPOConfig()), environment_spec=_spec())
    extras = policy_extras_spec(policy)
    assert set(extras) == {"log_prob"} and extras["log_prob"].shape == () and extras["log_prob"].dtype == np.float32


def test_a_policy_with_a_new_extras_field_gets_it_in_the_table_signature():
    from agents.dqn import DQNBuilder, DQNConfig, make_networks

    class DQNWithExtras(DQNBuilder):  # changes the policy only; the tables follow
        def make_policy(self, **kwargs):
            return _with_extra_field(super().make_policy(**kwargs))

    builder, spec = DQNWithExtras(DQNConfig()), _spec()
    policy = builder.make_policy(networks=make_networks(spec, DQNConfig()), environment_spec=spec)
    (table,) = builder.make_replay_tables(environment_spec=spec, policy=policy)
    extras = table.signature.extras
    assert set(extras) == {"clock", "flag"}
    assert tuple(extras["flag"].shape) == (3,) and extras["clock"].dtype.name == "int32"
    (plain,) = DQNBuilder(DQNConfig()).make_replay_tables(
        environment_spec=spec, policy=DQNBuilder(DQNConfig()).make_policy(
            networks=make_networks(spec, DQNConfig()), environment_spec=spec)
    )
    assert not plain.signature.extras  # DQN's own epsilon-greedy policy stores no extras


def test_builders_declare_what_runners_read_instead_of_runners_guessing():
    """`learning_parts` is declared once, by `OfflineBuilder`: every registered agent's builder gives it but the
    independent learners' (one learner per policy), whose call says so; an online builder declares its learner
    `batch_size` (batched acting asks `with_batch_size` for groups), an off-policy one its `priority_exponent`."""
    from acmelike.builders import ActorLearnerBuilder, OfflineBuilder
    from agents.off_policy import OffPolicyBuilder
    from launch.registry import AGENTS, agent_definition

    for name in AGENTS:
        definition = agent_definition(name)
        config = definition.config_class()
        builder = definition.make_builder(config)
        if name.startswith("independent_"):
            assert type(builder).learning_parts is OfflineBuilder.learning_parts, name
            with pytest.raises(NotImplementedError, match="DecentralisedBuilder gives no learning_parts"):
                builder.learning_parts(networks=None, environment_spec=None, random_key=None)
        else:
            assert type(builder).learning_parts is not OfflineBuilder.learning_parts, name
        if isinstance(builder, ActorLearnerBuilder):
            larger = builder.with_batch_size(2 * config.batch_size)
            assert builder.batch_size == config.batch_size and larger.batch_size == 2 * config.batch_size, name
            assert type(larger) is type(builder) and builder.config == config, name
        if isinstance(builder, OffPolicyBuilder):
            assert builder.priority_exponent == getattr(config, "priority_exponent", 0.0), name
