"""PPO losses (Schulman et al., 2017): generalized advantage estimation and the clipped surrogate objective."""

from typing import NamedTuple

import chex
import jax
import jax.numpy as jnp


def generalized_advantage_estimation(
    r_t: jax.Array, discount_t: jax.Array, values: jax.Array, lambda_: float, continues_t: jax.Array
) -> jax.Array:
    """GAE (Schulman et al., 2016) over one unroll: A_t = delta_t + lambda * discount_t * continues_t * A_{t+1}.

    delta_t = r_t + discount_t * values[t + 1] - values[t]. `continues_t` is 0 where the unroll leaves the episode
    after step t (the next step is an episode boundary), so advantages never leak across episodes, while
    `discount_t` (gamma times the environment discount) still bootstraps from values[t + 1] on truncation.

    Args:
      r_t: [T] rewards after each action.
      discount_t: [T] gamma times environment discounts.
      values: [T + 1] state values, the last one for bootstrapping. Stopped from gradients.
      lambda_: the GAE mixing parameter.
      continues_t: [T] 1 where step t + 1 belongs to the same episode (and is not its padding step), else 0.

    Returns:
      [T] advantages.
    """
    chex.assert_rank([r_t, discount_t, values, continues_t], 1)
    values = jax.lax.stop_gradient(values)
    deltas = r_t + discount_t * values[1:] - values[:-1]
    decays = lambda_ * discount_t * continues_t

    def backward(carry, inputs):
        delta, decay = inputs
        advantage = delta + decay * carry
        return advantage, advantage

    _, advantages = jax.lax.scan(backward, jnp.zeros((), deltas.dtype), (deltas, decays), reverse=True)
    return advantages


class PPOLossOutput(NamedTuple):
    loss: jax.Array
    policy_loss: jax.Array
    value_loss: jax.Array
    entropy: jax.Array
    approx_kl: jax.Array
    clip_fraction: jax.Array


def ppo_loss(
    logits: jax.Array,
    values: jax.Array,
    actions: jax.Array,
    behaviour_log_probs: jax.Array,
    advantages: jax.Array,
    returns: jax.Array,
    mask: jax.Array,
    *,
    clip_epsilon: float,
    value_cost: float,
    entropy_cost: float,
) -> PPOLossOutput:
    """The PPO objective for a categorical policy, as a loss to minimise over a flat batch of steps.

    loss = -E[min(rho A, clip(rho, 1 - eps, 1 + eps) A)] + value_cost * 0.5 E[(v - R)^2] - entropy_cost * E[H],
    with rho = pi(a|s) / mu(a|s). Advantages and returns are targets (stopped from gradients). Expectations are
    masked means: steps with mask 0 (episode padding) count for nothing.

    Args:
      logits: [N, A] policy logits. values: [N] value estimates. actions: [N] int actions.
      behaviour_log_probs: [N] log mu(a|s) recorded by the actor. advantages, returns: [N]. mask: [N] in {0, 1}.
    """
    chex.assert_rank([logits, values, actions, behaviour_log_probs, advantages, returns, mask], [2, 1, 1, 1, 1, 1, 1])
    advantages = jax.lax.stop_gradient(advantages)
    returns = jax.lax.stop_gradient(returns)
    denominator = jnp.maximum(mask.sum(), 1.0)

    def masked_mean(x):
        return jnp.sum(x * mask) / denominator

    log_probs_all = jax.nn.log_softmax(logits)
    log_probs = jnp.take_along_axis(log_probs_all, actions[:, None].astype(jnp.int32), axis=-1)[:, 0]
    log_ratio = log_probs - behaviour_log_probs
    ratio = jnp.exp(log_ratio)
    clipped_ratio = jnp.clip(ratio, 1.0 - clip_epsilon, 1.0 + clip_epsilon)
    policy_loss = -masked_mean(jnp.minimum(ratio * advantages, clipped_ratio * advantages))
    value_loss = 0.5 * masked_mean(jnp.square(values - returns))
    entropy = masked_mean(-jnp.sum(jnp.exp(log_probs_all) * log_probs_all, axis=-1))
    loss = policy_loss + value_cost * value_loss - entropy_cost * entropy
    return PPOLossOutput(
        loss=loss,
        policy_loss=policy_loss,
        value_loss=value_loss,
        entropy=entropy,
        # (r - 1) - log r: a low-variance, non-negative estimator of KL(mu || pi) (Schulman, 2020).
        approx_kl=masked_mean((ratio - 1.0) - log_ratio),
        clip_fraction=masked_mean((jnp.abs(ratio - 1.0) > clip_epsilon).astype(jnp.float32)),
    )
