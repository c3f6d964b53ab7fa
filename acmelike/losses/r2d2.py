"""R2D2's loss: n-step double Q-learning with value rescaling over a sequence, and sequence priorities."""

from typing import NamedTuple

import chex
import jax
import jax.numpy as jnp
import rlax


class SequenceTDOutput(NamedTuple):
    loss: jax.Array  # scalar: 0.5 * mean of squared TD errors over the steps in `mask`
    td_error: jax.Array  # [T], in the rescaled space


def transformed_n_step_double_q_loss(
    q_online: jax.Array,
    q_target: jax.Array,
    actions: jax.Array,
    rewards: jax.Array,
    discounts: jax.Array,
    continues: jax.Array,
    mask: jax.Array,
    *,
    n_step: int,
    rescaling_epsilon: float = 1e-3,
) -> SequenceTDOutput:
    """R2D2's TD loss (Kapturowski et al., 2019) for one sequence of T steps (T + 1 observations).

    With h(x) = sign(x)(sqrt(|x| + 1) - 1) + eps x (`rlax.signed_hyperbolic`) and its inverse:
      a*_{t+1} = argmax_a q_online[t + 1, a]                                     (double Q)
      v_t      = h^-1(q_target[t + 1, a*_{t+1}])                                 (bootstrap value after step t)
      G_t      = r_t + gamma_t [(1 - c_t) v_t + c_t G_{t+1}], at most n_step rewards   (rlax)
      TD_t     = h(G_t) - q_online[t, a_t]
    The target is stopped from gradients. `continues` c_t = 0 where the step after t is padding (the row after
    an episode's last observation): G_t then bootstraps from v_t, the value of that last observation, which keeps
    a truncated episode's bootstrap and never mixes two episodes' rewards.

    Args:
      q_online: [T + 1, A] online Q-values at every observation of the sequence.
      q_target: [T + 1, A] target-network Q-values.
      actions: [T] a_t.
      rewards: [T] r_t, after a_t.
      discounts: [T] gamma_t = gamma times the environment's discount after a_t.
      continues: [T] c_t in {0, 1}.
      mask: [T] 1 for steps that enter the loss (real steps past the burn-in), else 0.
      n_step: the most rewards a return sums before bootstrapping.
      rescaling_epsilon: eps of h.

    Returns: `SequenceTDOutput(loss, td_error)`; `td_error` is 0 outside `mask`.
    """
    chex.assert_rank([q_online, q_target, actions, rewards, discounts, continues, mask], [2, 2, 1, 1, 1, 1, 1])
    chex.assert_equal_shape([q_online, q_target])
    chex.assert_equal_shape([actions, rewards, discounts, continues, mask])
    chex.assert_shape(q_online, (actions.shape[0] + 1, None))
    mask = mask.astype(jnp.float32)
    best_next = jnp.argmax(q_online[1:], axis=-1)
    bootstrap = rlax.signed_parabolic(rlax.batched_index(q_target[1:], best_next), rescaling_epsilon)
    returns = rlax.n_step_bootstrapped_returns(
        rewards, discounts, bootstrap, n_step, lambda_t=continues.astype(jnp.float32)
    )
    targets = jax.lax.stop_gradient(rlax.signed_hyperbolic(returns, rescaling_epsilon))
    td_error = (targets - rlax.batched_index(q_online[:-1], actions)) * mask
    loss = 0.5 * jnp.sum(jnp.square(td_error)) / jnp.maximum(jnp.sum(mask), 1.0)
    return SequenceTDOutput(loss=loss, td_error=td_error)


def sequence_priority(td_error: jax.Array, mask: jax.Array, eta: float = 0.9) -> jax.Array:
    """R2D2's sequence priority: eta * max_t |TD_t| + (1 - eta) * mean_t |TD_t| over the steps in `mask`.

    Args: td_error [..., T], mask [..., T]. Returns [...].
    """
    chex.assert_equal_shape([td_error, mask])
    mask = mask.astype(jnp.float32)
    absolute = jnp.abs(td_error) * mask
    mean = jnp.sum(absolute, axis=-1) / jnp.maximum(jnp.sum(mask, axis=-1), 1.0)
    return eta * jnp.max(absolute, axis=-1) + (1.0 - eta) * mean
