"""SAC's networks: a tanh-squashed Gaussian policy and twin critics, sized by the config."""

import dataclasses

import jax.numpy as jnp

from acmelike.networks import FeedForwardNetwork
from acmelike.networks.continuous import CriticEnsemble, GaussianPolicy
from acmelike.specs import ActionBounds, EnvironmentSpec, continuous_action_bounds, flat_observation_size
from agents.sac.config import SACConfig


@dataclasses.dataclass(frozen=True)
class SACNetworks:
    policy: FeedForwardNetwork  # apply(params, [B, ...] obs) -> ([B, A] mean, [B, A] log std), pre-tanh
    critic: FeedForwardNetwork  # apply(params, [B, ...] obs, [B, A] unit-box actions) -> [2, B] Q-values
    bounds: ActionBounds


def make_networks(environment_spec: EnvironmentSpec, config: SACConfig = SACConfig()) -> SACNetworks:
    """Builds SAC's networks for `environment_spec`; ValueError naming SAC and the spec if it does not fit."""
    bounds = continuous_action_bounds(environment_spec, agent="SAC")
    flat_observation_size(environment_spec, agent="SAC")
    observation = jnp.zeros((1,) + tuple(environment_spec.observations.shape), jnp.float32)
    action = jnp.zeros((1, bounds.size), jnp.float32)
    policy = GaussianPolicy(hidden_sizes=config.policy_hidden_sizes, action_size=bounds.size)
    critic = CriticEnsemble(hidden_sizes=config.critic_hidden_sizes, num_critics=2)
    return SACNetworks(
        policy=FeedForwardNetwork(init=lambda key: policy.init(key, observation), apply=policy.apply),
        critic=FeedForwardNetwork(init=lambda key: critic.init(key, observation, action), apply=critic.apply),
        bounds=bounds,
    )
