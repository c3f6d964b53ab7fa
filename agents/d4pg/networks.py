"""D4PG's networks: a deterministic tanh policy and a categorical distributional critic, sized by the config."""

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np

from acmelike.networks import FeedForwardNetwork
from acmelike.networks.continuous import Critic, DeterministicPolicy
from acmelike.specs import ActionBounds, EnvironmentSpec, continuous_action_bounds, flat_observation_size
from agents.d4pg.config import D4PGConfig


@dataclasses.dataclass(frozen=True)
class D4PGNetworks:
    policy: FeedForwardNetwork  # apply(params, [B, ...] obs) -> [B, A] actions in [-1, 1]
    critic: FeedForwardNetwork  # apply(params, [B, ...] obs, [B, A] unit-box actions) -> [B, K] logits
    support: jax.Array  # [K] the atoms' values
    bounds: ActionBounds


def make_networks(environment_spec: EnvironmentSpec, config: D4PGConfig = D4PGConfig()) -> D4PGNetworks:
    """Builds D4PG's networks for `environment_spec`; ValueError naming D4PG and the spec if it does not fit."""
    bounds = continuous_action_bounds(environment_spec, agent="D4PG")
    flat_observation_size(environment_spec, agent="D4PG")
    observation = jnp.zeros((1,) + tuple(environment_spec.observations.shape), jnp.float32)
    action = jnp.zeros((1, bounds.size), jnp.float32)
    policy = DeterministicPolicy(hidden_sizes=config.policy_hidden_sizes, action_size=bounds.size)
    critic = Critic(hidden_sizes=config.critic_hidden_sizes, num_outputs=config.num_atoms)
    return D4PGNetworks(
        policy=FeedForwardNetwork(init=lambda key: policy.init(key, observation), apply=policy.apply),
        critic=FeedForwardNetwork(init=lambda key: critic.init(key, observation, action), apply=critic.apply),
        support=np.linspace(config.v_min, config.v_max, config.num_atoms, dtype=np.float32),
        bounds=bounds,
    )
