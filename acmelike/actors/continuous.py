"""Continuous actions: the tanh-squashed Gaussian, bounds-respecting rescaling, and actor cores for Box actions.

Policies work in the unit box [-1, 1]^A; `to_bounds` maps to the environment's bounds and clips, so an action
never leaves them, whatever the network outputs (huge means, rounding at the edges). Critics see actions in the
unit box too (`to_unit`), which keeps their inputs of order one for any environment's bounds.
"""

from typing import Any, Callable, NamedTuple, Tuple

import jax
import jax.numpy as jnp

from acmelike.actors.actor_core import ActorCore
from acmelike.specs import ActionBounds

_LOG_2 = 0.6931471805599453


def to_bounds(unit_action: jax.Array, bounds: ActionBounds) -> jax.Array:
    """Maps `[..., A]` actions from [-1, 1] to `[bounds.minimum, bounds.maximum]`, clipped so float32 rounding
    (and inputs outside [-1, 1]) cannot leave the bounds."""
    low, high = jnp.asarray(bounds.minimum), jnp.asarray(bounds.maximum)
    action = low + (jnp.clip(unit_action, -1.0, 1.0) + 1.0) * 0.5 * (high - low)
    return jnp.clip(action, low, high)


def to_unit(action: jax.Array, bounds: ActionBounds) -> jax.Array:
    """The inverse of `to_bounds`: `[..., A]` environment actions to [-1, 1]."""
    low, high = jnp.asarray(bounds.minimum), jnp.asarray(bounds.maximum)
    return jnp.clip(2.0 * (action.astype(jnp.float32) - low) / (high - low) - 1.0, -1.0, 1.0)


def squashed_gaussian_sample(mean: jax.Array, log_std: jax.Array, key: jax.Array) -> Tuple[jax.Array, jax.Array]:
    """Samples a = tanh(u), u ~ N(mean, exp(log_std)^2), and returns (a, log pi(a)) with a reparameterised gradient.

    log pi(a) = sum_i [log N(u_i) - log(1 - tanh(u_i)^2)] (Haarnoja et al., 2018, appendix C), the Jacobian term
    written as 2 (log 2 - u - softplus(-2u)) so it stays finite where tanh(u) rounds to +-1. The density is that
    of the unit-box action; rescaling to the bounds adds a constant, which no gradient sees.

    Args:
      mean, log_std: `[..., A]`.
      key: a PRNG key.

    Returns:
      (a in [-1, 1], `[..., A]`; log pi(a), `[...]`).
    """
    noise = jax.random.normal(key, mean.shape, mean.dtype)
    u = mean + jnp.exp(log_std) * noise
    log_normal = -0.5 * jnp.square(noise) - log_std - 0.5 * jnp.log(2.0 * jnp.pi)
    log_jacobian = 2.0 * (_LOG_2 - u - jax.nn.softplus(-2.0 * u))
    return jnp.tanh(u), jnp.sum(log_normal - log_jacobian, axis=-1)


class ContinuousActorState(NamedTuple):
    key: jax.Array


def _no_extras(state):
    return ()


def squashed_gaussian_core(
    policy_fn: Callable[[object, jax.Array], Tuple[jax.Array, jax.Array]], bounds: ActionBounds, greedy: bool = False
) -> ActorCore:
    """Acts with a tanh-squashed Gaussian policy `policy_fn(params, [1, ...]) -> ([1, A] mean, [1, A] log_std)`.

    Samples `tanh(u)`, or takes `tanh(mean)` if `greedy` (evaluation), then rescales to `bounds`. No extras.
    """

    def select_action(params, observation, state):
        key, sample_key = jax.random.split(state.key)
        mean, log_std = policy_fn(params, observation[None])
        if greedy:
            unit = jnp.tanh(mean[0])
        else:
            unit, _ = squashed_gaussian_sample(mean[0], log_std[0], sample_key)
        return to_bounds(unit, bounds), ContinuousActorState(key=key)

    return ActorCore(init=lambda key: ContinuousActorState(key=key), select_action=select_action, get_extras=_no_extras)


def gaussian_noise_core(
    policy_fn: Callable[[object, jax.Array], jax.Array], bounds: ActionBounds, sigma: float
) -> ActorCore:
    """Acts with a deterministic policy `policy_fn(params, [1, ...]) -> [1, A]` in [-1, 1], plus N(0, sigma^2) noise.

    The noise is added in the unit box (so `sigma` is a fraction of the half-range of every dimension), then the
    action is clipped and rescaled to `bounds` (Fujimoto et al., 2018; Barth-Maron et al., 2018). `sigma` = 0
    gives the deterministic evaluation policy. No extras.
    """

    def select_action(params, observation, state):
        key, noise_key = jax.random.split(state.key)
        unit = policy_fn(params, observation[None])[0]
        if sigma > 0:
            unit = unit + sigma * jax.random.normal(noise_key, unit.shape, unit.dtype)
        return to_bounds(unit, bounds), ContinuousActorState(key=key)

    return ActorCore(init=lambda key: ContinuousActorState(key=key), select_action=select_action, get_extras=_no_extras)


class UniformWarmupState(NamedTuple):
    key: jax.Array
    steps: jax.Array  # actions selected so far, over the state's whole life
    inner: Any  # the wrapped core's state


def uniform_warmup_core(core: ActorCore, bounds: ActionBounds, num_steps: int) -> ActorCore:
    """`core`, except that its first `num_steps` actions are drawn uniformly from `bounds`.

    Fujimoto et al. (2018)'s `start_timesteps`, which Stable-Baselines3 (`learning_starts`) and Tianshou
    (`start_timesteps`) also apply: the replay's first transitions cover the whole action box instead of the
    untrained policy's neighbourhood of one action (a deterministic policy with small noise explores little).
    The count runs over the state's life, across episodes; each actor state counts its own (a batched actor's
    environments each have one). `core` still runs every step, so its state evolves as it would unwrapped.
    Its extras must not describe the chosen action (SAC's, TD3's and D4PG's cores have none). `num_steps` = 0
    returns `core` itself, so its random stream is unchanged.
    """
    if num_steps < 0:
        raise ValueError(f"uniform_warmup_core: num_steps must be >= 0, got {num_steps}.")
    if num_steps == 0:
        return core
    low, high = jnp.asarray(bounds.minimum), jnp.asarray(bounds.maximum)

    def init(key):
        key, inner_key = jax.random.split(key)
        return UniformWarmupState(key=key, steps=jnp.zeros((), jnp.int32), inner=core.init(inner_key))

    def select_action(params, observation, state):
        action, inner = core.select_action(params, observation, state.inner)
        key, uniform_key = jax.random.split(state.key)
        uniform = jax.random.uniform(uniform_key, low.shape, low.dtype, low, high)
        action = jnp.where(state.steps < num_steps, jnp.clip(uniform, low, high), action)
        return action, UniformWarmupState(key=key, steps=state.steps + 1, inner=inner)

    return ActorCore(
        init=init,
        select_action=select_action,
        get_extras=lambda state: core.get_extras(state.inner),
        on_episode_start=lambda state: state._replace(inner=core.on_episode_start(state.inner)),
    )
