"""EnvironmentSpec: what an agent must know about an environment before it builds networks."""

from typing import NamedTuple

import dm_env
import numpy as np
from dm_env import specs

from acmelike.types import NestedSpec


class EnvironmentSpec(NamedTuple):
    observations: NestedSpec
    actions: NestedSpec
    rewards: NestedSpec
    discounts: NestedSpec


def make_environment_spec(environment: dm_env.Environment) -> EnvironmentSpec:
    """Reads the four specs of a dm_env environment."""
    return EnvironmentSpec(
        observations=environment.observation_spec(),
        actions=environment.action_spec(),
        rewards=environment.reward_spec(),
        discounts=environment.discount_spec(),
    )


def num_discrete_actions(spec: EnvironmentSpec, *, agent: str) -> int:
    """The number of actions of a discrete action spec, or a ValueError naming agent and spec."""
    actions = spec.actions
    if not isinstance(actions, specs.DiscreteArray):
        raise ValueError(
            f"{agent} needs a discrete action space (dm_env.specs.DiscreteArray), but the environment's action "
            f"spec is {actions!r}. Use an agent for continuous actions, or an environment with Discrete actions."
        )
    return int(actions.num_values)


def flat_observation_size(spec: EnvironmentSpec, *, agent: str) -> int:
    """Size of a single flat array observation, or a ValueError naming agent and spec."""
    observations = spec.observations
    if not isinstance(observations, specs.Array) or not np.issubdtype(observations.dtype, np.floating):
        raise ValueError(
            f"{agent}'s MLP network needs one floating-point array observation, but the environment's observation "
            f"spec is {observations!r}. Wrap the environment (e.g. SinglePrecisionWrapper) or use another network."
        )
    return int(np.prod(observations.shape))


def zeros_like(spec: NestedSpec):
    """A pytree of zero arrays matching a pytree of specs."""
    import jax

    return jax.tree_util.tree_map(lambda s: np.zeros(s.shape, s.dtype), spec)
