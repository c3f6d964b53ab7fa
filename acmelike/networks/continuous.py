"""Networks for continuous control: policies that act in the unit box, and critics Q(s, a) (one or an ensemble).

Actions enter and leave these networks in [-1, 1]^A (see `acmelike.actors.continuous.to_bounds`/`to_unit`).
"""

from typing import Callable, Optional, Sequence, Tuple

import flax.linen as nn
import jax
import jax.numpy as jnp

from acmelike.networks.base import FeedForwardNetwork
from acmelike.networks.mlp import MLP
from acmelike.specs import ActionBounds, EnvironmentSpec, continuous_action_bounds, flat_observation_size


# Acme's NearZeroInitializedLinear: a policy whose last layer starts here acts near 0, where tanh is linear, so the
# critic's dQ/da reaches it undamped from the first update.
NEAR_ZERO = nn.initializers.variance_scaling(1e-4, "fan_in", "truncated_normal")


class DeterministicPolicy(nn.Module):
    """mu(s) = tanh(MLP(s)): `[B, ...]` observations -> `[B, A]` actions in [-1, 1] (TD3, D4PG).

    `final_kernel_init` initialises the last layer (None: as the others, LeCun normal; `NEAR_ZERO`: Acme's D4PG)."""

    hidden_sizes: Sequence[int]
    action_size: int
    final_kernel_init: Optional[Callable] = None

    @nn.compact
    def __call__(self, observations: jax.Array) -> jax.Array:
        mlp = MLP(tuple(self.hidden_sizes) + (self.action_size,), final_kernel_init=self.final_kernel_init)
        return jnp.tanh(mlp(observations))


class GaussianPolicy(nn.Module):
    """`[B, ...]` observations -> (`[B, A]` mean, `[B, A]` log std) of the pre-tanh Gaussian (SAC).

    The log std is squashed softly into [log_std_min, log_std_max], so the policy can neither collapse to a point
    nor explode, and its gradient never vanishes at a hard clip.
    """

    hidden_sizes: Sequence[int]
    action_size: int
    log_std_min: float = -5.0
    log_std_max: float = 2.0

    @nn.compact
    def __call__(self, observations: jax.Array) -> Tuple[jax.Array, jax.Array]:
        torso = MLP(tuple(self.hidden_sizes), activate_final=True)(observations)
        mean = nn.Dense(self.action_size)(torso)
        raw = nn.Dense(self.action_size)(torso)
        log_std = self.log_std_min + 0.5 * (self.log_std_max - self.log_std_min) * (jnp.tanh(raw) + 1.0)
        return mean, log_std


class Critic(nn.Module):
    """Q(s, a): MLP over [flat s, a] -> `[B, num_outputs]` (1 for a value, K atoms' logits for a distribution)."""

    hidden_sizes: Sequence[int]
    num_outputs: int = 1

    @nn.compact
    def __call__(self, observations: jax.Array, actions: jax.Array) -> jax.Array:
        flat = jnp.reshape(observations, (observations.shape[0], -1)).astype(jnp.float32)
        inputs = jnp.concatenate([flat, actions.astype(jnp.float32)], axis=-1)
        return MLP(tuple(self.hidden_sizes) + (self.num_outputs,))(inputs)


class CriticEnsemble(nn.Module):
    """N independent critics in one module (independent parameters, one batched matmul per layer).

    `[B, ...]` observations, `[B, A]` actions -> `[N, B]` values (num_outputs = 1) or `[N, B, K]` outputs.
    """

    hidden_sizes: Sequence[int]
    num_critics: int = 2
    num_outputs: int = 1

    @nn.compact
    def __call__(self, observations: jax.Array, actions: jax.Array) -> jax.Array:
        ensemble = nn.vmap(
            Critic,
            variable_axes={"params": 0},
            split_rngs={"params": True},
            in_axes=None,
            out_axes=0,
            axis_size=self.num_critics,
        )(self.hidden_sizes, self.num_outputs)
        outputs = ensemble(observations, actions)
        return outputs[..., 0] if self.num_outputs == 1 else outputs


def policy_and_critic(
    environment_spec: EnvironmentSpec,
    *,
    agent: str,
    policy: Callable[[int], nn.Module],
    critic: nn.Module,
) -> Tuple[FeedForwardNetwork, FeedForwardNetwork, ActionBounds]:
    """An actor-critic agent's policy (`policy(action_size)`) and critic as networks initialised on the spec.

    Returns (policy network, critic network, the action bounds). Raises ValueError naming `agent` and the spec
    when the actions are not a bounded box or the observations are not a flat vector.
    """
    bounds = continuous_action_bounds(environment_spec, agent=agent)
    flat_observation_size(environment_spec, agent=agent)
    observation = jnp.zeros((1,) + tuple(environment_spec.observations.shape), jnp.float32)
    action = jnp.zeros((1, bounds.size), jnp.float32)
    policy_module = policy(bounds.size)
    return (
        FeedForwardNetwork(init=lambda key: policy_module.init(key, observation), apply=policy_module.apply),
        FeedForwardNetwork(init=lambda key: critic.init(key, observation, action), apply=critic.apply),
        bounds,
    )
