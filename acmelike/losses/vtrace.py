"""IMPALA's loss: V-trace targets, policy gradient, baseline and entropy terms over one sequence."""

from typing import NamedTuple

import chex
import jax
import jax.numpy as jnp
import rlax


class ImpalaLossOutput(NamedTuple):
    loss: jax.Array  # scalar: pg_loss + baseline_cost * baseline_loss - entropy_cost * entropy
    pg_loss: jax.Array
    baseline_loss: jax.Array
    entropy: jax.Array  # mean policy entropy over real steps
    vtrace_targets: jax.Array  # [T] v_s, stopped from gradients
    log_importance_ratios: jax.Array  # [T] log(pi/mu), 0 at padding; minus its mean estimates KL(mu || pi)


def impala_loss(
    logits: jax.Array,
    values: jax.Array,
    actions: jax.Array,
    rewards: jax.Array,
    discounts: jax.Array,
    behaviour_logits: jax.Array,
    mask: jax.Array,
    *,
    lambda_: float = 1.0,
    clip_rho_threshold: float = 1.0,
    clip_pg_rho_threshold: float = 1.0,
    baseline_cost: float = 0.5,
    entropy_cost: float = 0.01,
) -> ImpalaLossOutput:
    """The IMPALA loss (Espeholt et al., 2018) for one sequence of T steps, V-trace from `rlax`.

    v_s = V(x_s) + sum_{t>=s} (prod_{s<=i<t} gamma_i c_i) rho_t delta_t,   delta_t = r_t + gamma_t V(x_{t+1}) - V(x_t),
    rho_t = min(rho_bar, pi/mu), c_i = lambda min(1, pi/mu). Policy gradient: -rho^pg_t (r_t + gamma_t v_{t+1} -
    V(x_t)) log pi(a_t|x_t); baseline: 0.5 (v_s - V(x_s))^2; entropy bonus. V-trace targets and advantages are
    stopped from gradients.

    Steps with `mask` 0 (a padding step written after an episode's last observation) carry no action: their
    importance ratio is set to 0, so their V-trace target is their own value estimate (it neither pulls the value
    nor carries corrections into earlier steps), and they add nothing to any term.

    Args:
      logits: [T, A] current policy logits at x_0..x_{T-1}.
      values: [T + 1] current value estimates at x_0..x_T (x_T only bootstraps).
      actions: [T] actions taken by the behaviour policy.
      rewards: [T] r_t, received after a_t.
      discounts: [T] gamma_t = gamma times the environment's discount after a_t (0 at termination).
      behaviour_logits: [T, A] logits of the policy that chose the actions (mu).
      mask: [T] 1 for real steps, 0 for padding.

    Returns: an `ImpalaLossOutput`; the loss and its terms are sums over steps divided by the number of real
      steps (at least 1).
    """
    chex.assert_rank([logits, values, actions, rewards, discounts, behaviour_logits, mask], [2, 1, 1, 1, 1, 2, 1])
    chex.assert_equal_shape([logits, behaviour_logits])
    chex.assert_equal_shape([actions, rewards, discounts, mask])
    chex.assert_shape(values, (actions.shape[0] + 1,))
    mask = mask.astype(jnp.float32)
    log_pi = rlax.batched_index(jax.nn.log_softmax(logits), actions)
    log_mu = rlax.batched_index(jax.nn.log_softmax(behaviour_logits), actions)
    log_rhos = (jax.lax.stop_gradient(log_pi) - log_mu) * mask
    rhos = jnp.exp(log_rhos) * mask
    vtrace = rlax.vtrace_td_error_and_advantage(
        values[:-1],
        values[1:],
        rewards,
        discounts,
        rhos,
        lambda_=lambda_,
        clip_rho_threshold=clip_rho_threshold,
        clip_pg_rho_threshold=clip_pg_rho_threshold,
        stop_target_gradients=True,
    )
    count = jnp.maximum(jnp.sum(mask), 1.0)
    pg_loss = -jnp.sum(jax.lax.stop_gradient(vtrace.pg_advantage) * log_pi * mask) / count
    baseline_loss = 0.5 * jnp.sum(jnp.square(vtrace.errors) * mask) / count
    log_probs = jax.nn.log_softmax(logits)
    entropy = -jnp.sum(jnp.sum(jnp.exp(log_probs) * log_probs, axis=-1) * mask) / count
    loss = pg_loss + baseline_cost * baseline_loss - entropy_cost * entropy
    targets = jax.lax.stop_gradient(vtrace.errors + values[:-1])
    return ImpalaLossOutput(loss, pg_loss, baseline_loss, entropy, targets, log_rhos)
