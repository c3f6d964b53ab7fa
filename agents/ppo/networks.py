"""PPO networks: separate MLP policy (categorical logits) and value function over flat observations, or a conv
torso on images shared by linear policy and value heads."""

import dataclasses
from typing import Sequence

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np

from acmelike.networks import MLP, FeedForwardNetwork, make_torso
from acmelike.specs import EnvironmentSpec, flat_observation_size, num_discrete_actions
from agents.ppo.config import PPOConfig


class _PolicyValue(nn.Module):
    hidden_sizes: Sequence[int]
    num_actions: int

    @nn.compact
    def __call__(self, observations):
        hidden = nn.initializers.orthogonal(np.sqrt(2))
        logits = MLP(
            tuple(self.hidden_sizes) + (self.num_actions,),
            activation=nn.tanh,
            kernel_init=hidden,
            final_kernel_init=nn.initializers.orthogonal(0.01),  # near-uniform initial policy
        )(observations)
        values = MLP(
            tuple(self.hidden_sizes) + (1,),
            activation=nn.tanh,
            kernel_init=hidden,
            final_kernel_init=nn.initializers.orthogonal(1.0),
        )(observations)
        return logits, values[..., 0]


class _SharedTorsoPolicyValue(nn.Module):
    """An image torso shared by a linear policy head and a linear value head (Schulman et al. 2017's Atari network;
    CleanRL's ppo_atari): orthogonal initialisation, the policy head's scaled to 0.01 for a near-uniform start."""

    torso: nn.Module
    num_actions: int

    @nn.compact
    def __call__(self, observations):
        features = self.torso(observations)
        logits = nn.Dense(self.num_actions, kernel_init=nn.initializers.orthogonal(0.01))(features)
        values = nn.Dense(1, kernel_init=nn.initializers.orthogonal(1.0))(features)
        return logits, values[..., 0]


@dataclasses.dataclass(frozen=True)
class PPONetworks:
    network: FeedForwardNetwork  # apply(params, [B, ...]) -> ([B, A] logits, [B] values)
    num_actions: int

    def logits(self, params, observations: jax.Array) -> jax.Array:
        return self.network.apply(params, observations)[0]


def make_networks(environment_spec: EnvironmentSpec, config: PPOConfig = PPOConfig()) -> PPONetworks:
    """Builds PPO's networks (`config.torso`: MLPs of `config.hidden_sizes`, or a shared conv torso); raises
    ValueError naming PPO and the spec (or the torso) that does not fit."""
    num_actions = num_discrete_actions(environment_spec, agent="PPO")
    if config.torso == "mlp":
        flat_observation_size(environment_spec, agent="PPO")
        module = _PolicyValue(hidden_sizes=tuple(config.hidden_sizes), num_actions=num_actions)
    else:
        torso = make_torso(config.torso, environment_spec.observations, agent="PPO")
        module = _SharedTorsoPolicyValue(torso=torso, num_actions=num_actions)
    dummy = jnp.zeros((1,) + tuple(environment_spec.observations.shape), jnp.float32)
    return PPONetworks(
        network=FeedForwardNetwork(init=lambda key: module.init(key, dummy), apply=module.apply),
        num_actions=num_actions,
    )
