"""MPO's networks: a diagonal Gaussian policy over the unit box and a critic Q(s, a), sized by the config: a scalar
critic, or DMPO's categorical distribution over returns (`critic_type="categorical"`)."""

import dataclasses
from typing import Optional, Sequence, Tuple

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np

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


class ClippedActionCritic(nn.Module):
    """Q(s, a): `[B, ...]` observations and `[B, A]` unit-box actions -> `[B]` values, or with `num_atoms` > 0
    `[B, num_atoms]` logits of the return's distribution (DMPO). Actions are clipped to the box, so the critic
    never extrapolates to actions no environment step could take."""

    hidden_sizes: Sequence[int]
    num_atoms: int = 0

    @nn.compact
    def __call__(self, observations: jax.Array, actions: jax.Array) -> jax.Array:
        outputs = Critic(self.hidden_sizes, num_outputs=max(self.num_atoms, 1))(
            observations, jnp.clip(actions, -1.0, 1.0))
        return outputs if self.num_atoms else outputs[..., 0]


@dataclasses.dataclass(frozen=True)
class MPONetworks:
    policy: FeedForwardNetwork  # apply(params, [B, ...] obs) -> ([B, A] mean, [B, A] stddev), unit box
    critic: FeedForwardNetwork  # apply(params, [B, ...] obs, [B, A] unit-box actions) -> [B] Q or [B, K] logits
    bounds: ActionBounds
    support: Optional[np.ndarray] = None  # [K] the categorical critic's atoms; None for a scalar critic


def make_networks(environment_spec: EnvironmentSpec, config: MPOConfig = MPOConfig()) -> MPONetworks:
    """Builds MPO's networks for `environment_spec`; ValueError naming MPO and the spec if it does not fit."""
    categorical = config.critic_type == "categorical"
    policy, critic, bounds = policy_and_critic(
        environment_spec,
        agent="MPO",
        policy=lambda action_size: DiagonalGaussianPolicy(
            hidden_sizes=config.policy_hidden_sizes, action_size=action_size, init_stddev=config.init_stddev,
            min_stddev=config.min_stddev),
        critic=ClippedActionCritic(hidden_sizes=config.critic_hidden_sizes,
                                   num_atoms=config.num_atoms if categorical else 0),
    )
    support = np.linspace(config.v_min, config.v_max, config.num_atoms, dtype=np.float32) if categorical else None
    return MPONetworks(policy=policy, critic=critic, bounds=bounds, support=support)
