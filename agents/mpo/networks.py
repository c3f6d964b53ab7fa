"""MPO's networks: a diagonal Gaussian policy over the unit box and a critic Q(s, a), sized by the config."""

import dataclasses
from typing import Sequence, Tuple

import flax.linen as nn
import jax
import jax.numpy as jnp

from acmelike.networks import FeedForwardNetwork
from acmelike.networks.continuous import Critic, policy_and_critic
from acmelike.networks.mlp import MLP
from acmelike.specs import ActionBounds, EnvironmentSpec
from agents.mpo.config import MPOConfig


class DiagonalGaussianPolicy(nn.Module):
    """`[B, ...]` observations -> (`[B, A]` mean, `[B, A]` stddev) of a Gaussian over unit-box actions.

    The mean is tanh-bounded to [-1, 1], so it never leaves the actions' box (samples can: they are clipped when
    acted and when the critic sees them). The stddev is softplus(x) * init_stddev / softplus(0) + min_stddev:
    `init_stddev` (plus `min_stddev`) for a zero pre-activation, and never below `min_stddev` (Acme's
    `MultivariateNormalDiagHead`).
    """

    hidden_sizes: Sequence[int]
    action_size: int
    init_stddev: float
    min_stddev: float

    @nn.compact
    def __call__(self, observations: jax.Array) -> Tuple[jax.Array, jax.Array]:
        torso = MLP(tuple(self.hidden_sizes), activate_final=True)(observations)
        small = nn.initializers.variance_scaling(1e-4, "fan_in", "uniform")
        mean = jnp.tanh(nn.Dense(self.action_size, kernel_init=small)(torso))
        raw = nn.Dense(self.action_size, kernel_init=small)(torso)
        stddev = jax.nn.softplus(raw) * (self.init_stddev / jax.nn.softplus(0.0)) + self.min_stddev
        return mean, stddev


class ScalarCritic(nn.Module):
    """Q(s, a): `[B, ...]` observations and `[B, A]` unit-box actions -> `[B]` values (actions clipped to the box,
    so the critic never extrapolates to actions no environment step could take)."""

    hidden_sizes: Sequence[int]

    @nn.compact
    def __call__(self, observations: jax.Array, actions: jax.Array) -> jax.Array:
        return Critic(self.hidden_sizes)(observations, jnp.clip(actions, -1.0, 1.0))[..., 0]


@dataclasses.dataclass(frozen=True)
class MPONetworks:
    policy: FeedForwardNetwork  # apply(params, [B, ...] obs) -> ([B, A] mean, [B, A] stddev), unit box
    critic: FeedForwardNetwork  # apply(params, [B, ...] obs, [B, A] unit-box actions) -> [B] Q-values
    bounds: ActionBounds


def make_networks(environment_spec: EnvironmentSpec, config: MPOConfig = MPOConfig()) -> MPONetworks:
    """Builds MPO's networks for `environment_spec`; ValueError naming MPO and the spec if it does not fit."""
    policy, critic, bounds = policy_and_critic(
        environment_spec,
        agent="MPO",
        policy=lambda action_size: DiagonalGaussianPolicy(
            hidden_sizes=config.policy_hidden_sizes, action_size=action_size, init_stddev=config.init_stddev,
            min_stddev=config.min_stddev),
        critic=ScalarCritic(hidden_sizes=config.critic_hidden_sizes),
    )
    return MPONetworks(policy=policy, critic=critic, bounds=bounds)
