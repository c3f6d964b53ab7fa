"""Each config part's checks run in every registered agent's config composed of it.

Generated from the registry and `agents.config_parts`: an agent whose `__post_init__` forgets
`super().__post_init__()`, or a part whose own `__post_init__` forgets it, accepts a bad value here and fails.
"""

import dataclasses
import inspect
import re

import pytest

from agents import config_parts
from launch.registry import AGENTS, agent_definition

# Part -> (one of its fields, a value its check refuses, what the error says the field must be).
BAD_VALUES = {
    config_parts.SGDBatches: ("num_sgd_steps_per_step", 0, ">= 1"),
    config_parts.NStepTargets: ("n_step", 0, ">= 1"),
    config_parts.Replay: ("samples_per_insert_tolerance_rate", -0.5, ">= 0"),
    config_parts.PrioritizedReplay: ("importance_sampling_exponent", 2.0, "in [0, 1]"),
    config_parts.SequenceQueue: ("max_queue_size", 0, ">= batch_size"),
    config_parts.Optimizer: ("max_gradient_norm", 0.0, "> 0"),
    config_parts.TorsoNetwork: ("hidden_sizes", (0,), "positive layer sizes"),
    config_parts.ActorCriticLearning: ("tau", 0.0, "in (0, 1]"),
    config_parts.ActorCriticNetworks: ("critic_hidden_sizes", (), "one or more positive layer sizes"),
    config_parts.EntropyTemperature: ("initial_temperature", 0.0, "> 0"),
    config_parts.RandomWarmup: ("random_warmup_steps", -1, ">= 0"),
    config_parts.GaussianExploration: ("exploration_noise", -0.1, ">= 0"),
    config_parts.VariableUpdates: ("variable_update_period", 0, ">= 1"),
}


def test_every_part_with_fields_has_a_bad_value_here():
    parts = {part for _, part in inspect.getmembers(config_parts, inspect.isclass)
             if issubclass(part, config_parts.ConfigPart) and inspect.get_annotations(part)}
    assert parts == set(BAD_VALUES)


@pytest.mark.parametrize("part", BAD_VALUES, ids=lambda part: part.__name__)
def test_a_part_check_refuses_a_bad_value_in_every_agent_config_made_of_it(part):
    field, value, allowed = BAD_VALUES[part]
    config_classes = [agent_definition(name).config_class for name in AGENTS]
    composed = [config_class for config_class in config_classes if issubclass(config_class, part)]
    assert composed, f"no registered agent's config is made of {part.__name__}"
    for config_class in composed:
        message = rf"^{config_class.__name__}\.{field} = {re.escape(repr(value))}; it must be {re.escape(allowed)}\.$"
        with pytest.raises(ValueError, match=message):
            config_class(**{field: value})


def test_a_part_field_keeps_its_flat_name_and_an_agent_can_give_it_its_own_default():
    from agents.d4pg.config import D4PGConfig
    from agents.td3.config import TD3Config

    assert D4PGConfig().n_step == 5 and TD3Config().n_step == 1  # D4PG re-declares the part's field
    names = [field.name for field in dataclasses.fields(D4PGConfig)]
    assert len(names) == len(set(names)) and "n_step" in names


@pytest.mark.parametrize("name", ["dqn", "cql"])
def test_an_agent_clipping_gradients_by_global_norm_refuses_a_bound_that_is_not_positive(name):
    """DQN's and CQL's optimisers start with `optax.clip_by_global_norm(max_gradient_norm)`, which flips the
    gradients for a negative bound and zeroes them at 0: the `Optimizer` part's check refuses both."""
    config_class = agent_definition(name).config_class
    assert issubclass(config_class, config_parts.Optimizer), config_class.__mro__
    for bound in (0.0, -1.0):
        message = rf"^{config_class.__name__}\.max_gradient_norm = {bound}; it must be > 0\.$"
        with pytest.raises(ValueError, match=message):
            config_class(max_gradient_norm=bound)
