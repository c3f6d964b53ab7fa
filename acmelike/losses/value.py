"""Value-based losses: double Q-learning over n-step transitions, with importance weights."""

from typing import Tuple

import chex
import jax
import jax.numpy as jnp
import rlax


def double_q_td_loss(
    q_tm1: jax.Array,
    a_tm1: jax.Array,
    r_t: jax.Array,
    discount_t: jax.Array,
    q_t_value: jax.Array,
    q_t_selector: jax.Array,
    importance_weights: jax.Array,
    huber_loss_parameter: float = 1.0,
) -> Tuple[jax.Array, jax.Array]:
    """Double Q-learning loss (van Hasselt et al., 2016) for a batch of (n-step) transitions.

    target = r_t + discount_t * q_t_value[argmax_a q_t_selector[a]]; the target is stopped from gradients.
    `discount_t` is the total discount to the bootstrap state (gamma^n times environment discounts), as stored
    by `NStepTransitionAdder`.

    Args:
      q_tm1: [B, A] online Q-values at the first observation.
      a_tm1: [B] actions taken.
      r_t: [B] (n-step) rewards.
      discount_t: [B] total discounts.
      q_t_value: [B, A] target-network Q-values at the bootstrap observation.
      q_t_selector: [B, A] online Q-values at the bootstrap observation (chooses the action).
      importance_weights: [B] prioritized-replay corrections (ones for uniform replay).
      huber_loss_parameter: Huber loss threshold; 0 gives the squared loss.

    Returns:
      (loss, td_error): the scalar importance-weighted mean loss, and the [B] TD errors (for priorities).
    """
    chex.assert_rank([q_tm1, a_tm1, r_t, discount_t, q_t_value, q_t_selector, importance_weights], [2, 1, 1, 1, 2, 2, 1])
    batch_double_q = jax.vmap(rlax.double_q_learning)
    td_error = batch_double_q(q_tm1, a_tm1, r_t, discount_t, q_t_value, q_t_selector)
    if huber_loss_parameter > 0:
        per_example = rlax.huber_loss(td_error, huber_loss_parameter)
    else:
        per_example = 0.5 * jnp.square(td_error)
    loss = jnp.mean(importance_weights * per_example)
    return loss, td_error
