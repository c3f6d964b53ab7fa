"""Losses of off-policy actor-critic agents with continuous actions (SAC, TD3, D4PG's actor)."""

from typing import Optional

import chex
import jax
import jax.numpy as jnp
import rlax


def clipped_double_q_target(
    r_t: jax.Array, discount_t: jax.Array, q_t: jax.Array, entropy_t: Optional[jax.Array] = None
) -> jax.Array:
    """The clipped double-Q target (Fujimoto et al., 2018): y = r_t + discount_t * (min_i q_t[i] + entropy_t).

    Taking the minimum over critics counters the overestimation a single critic's maximisation brings. SAC
    (Haarnoja et al., 2018) adds its soft-value bonus `entropy_t = -alpha * log pi(a_t|s_t)`. The target is
    stopped from gradients.

    Args:
      r_t: [B] (n-step) rewards.
      discount_t: [B] total discounts to the bootstrap state (gamma^n times environment discounts).
      q_t: [N, B] target critics' values of the next action at the bootstrap state (N >= 1 critics).
      entropy_t: optional [B] bonus added to the minimum before discounting.

    Returns:
      [B] targets.
    """
    chex.assert_rank([r_t, discount_t, q_t], [1, 1, 2])
    value_t = jnp.min(q_t, axis=0)
    if entropy_t is not None:
        chex.assert_rank(entropy_t, 1)
        value_t = value_t + entropy_t
    return jax.lax.stop_gradient(r_t + discount_t * value_t)


def critic_regression_loss(
    q_tm1: jax.Array, target: jax.Array, importance_weights: Optional[jax.Array] = None
) -> jax.Array:
    """Each of N critics regressed onto one target: sum_i mean_b w_b 0.5 (q_tm1[i, b] - target_b)^2.

    Args:
      q_tm1: [N, B] the critics' values of the taken actions.
      target: [B] targets (stopped from gradients here as well).
      importance_weights: optional [B] prioritized-replay corrections.

    Returns:
      the scalar loss.
    """
    chex.assert_rank([q_tm1, target], [2, 1])
    per_example = 0.5 * jnp.square(jax.lax.stop_gradient(target)[None] - q_tm1)
    if importance_weights is not None:
        per_example = per_example * importance_weights[None]
    return jnp.sum(jnp.mean(per_example, axis=1))


def sac_actor_loss(q: jax.Array, log_prob: jax.Array, alpha: jax.Array) -> jax.Array:
    """SAC's policy loss (Haarnoja et al., 2018): E[alpha * log pi(a|s) - Q(s, a)], with a ~ pi reparameterised.

    Gradients flow to the policy through `q` (via the sampled action) and `log_prob`; `alpha` is stopped from
    gradients, and the critic parameters inside `q` must be held fixed by the caller.

    Args:
      q: [B] critic value (the minimum over critics) of the sampled actions.
      log_prob: [B] log pi(a|s) of the sampled actions.
      alpha: scalar temperature.
    """
    chex.assert_rank([q, log_prob], 1)
    return jnp.mean(jax.lax.stop_gradient(alpha) * log_prob - q)


def sac_temperature_loss(log_alpha: jax.Array, log_prob: jax.Array, target_entropy: float) -> jax.Array:
    """SAC's temperature loss (Haarnoja et al., 2018b): -log_alpha * E[log pi(a|s) + target_entropy].

    Its gradient raises alpha while the policy's entropy -E[log pi] is below `target_entropy` and lowers it while
    above, so the entropy is driven toward the target. `log_prob` is stopped from gradients. Optimising
    log alpha keeps alpha positive.

    Args:
      log_alpha: scalar, the parameter.
      log_prob: [B] log pi(a|s) of actions sampled from the current policy.
      target_entropy: the entropy to hold (commonly -A for A action dimensions).
    """
    chex.assert_rank([log_alpha, log_prob], [0, 1])
    return -log_alpha * jnp.mean(jax.lax.stop_gradient(log_prob) + target_entropy)


def deterministic_policy_gradient_loss(
    actions: jax.Array, dq_da: jax.Array, dqda_clipping: Optional[float] = None
) -> jax.Array:
    """The deterministic policy gradient (Silver et al., 2014) as a loss: mean_b rlax.dpg_loss(a_b, dq/da_b).

    Its gradient with respect to the policy parameters is -E[dQ/da * da/dtheta]: the policy's actions move up the
    critic's gradient. `dq_da` is stopped from gradients (compute it with the critic held fixed).

    Args:
      actions: [B, A] the policy's actions mu(s), differentiable in the policy parameters.
      dq_da: [B, A] gradient of Q(s, a) with respect to a at a = mu(s).
      dqda_clipping: optional bound on the norm of each dq/da (as in D4PG).
    """
    chex.assert_rank([actions, dq_da], 2)
    per_example = jax.vmap(lambda a, g: rlax.dpg_loss(a, g, dqda_clipping))(actions, jax.lax.stop_gradient(dq_da))
    return jnp.mean(jnp.sum(per_example, axis=-1))
