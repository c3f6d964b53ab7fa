"""MuZero's targets and losses (Schrittwieser et al., 2020): categorical values and rewards over a rescaled support,
n-step value targets over a stored sequence, and the masks that stop an unroll at its episode's end."""

import functools
from typing import NamedTuple

import chex
import jax
import jax.numpy as jnp
import rlax


def categorical_value_transform(num_bins: int, max_value: float, rescaling_epsilon: float = 1e-3) -> rlax.TxPair:
    """MuZero's scalar <-> categorical pair (`rlax.muzero_pair`).

    `apply(x [...]) -> probs [..., num_bins]`: h(x) = sign(x)(sqrt(|x| + 1) - 1) + eps x (`rlax.signed_hyperbolic`),
    clipped to [-max_value, max_value] and split between its two nearest atoms of the evenly spaced support
    (`rlax.transform_to_2hot`). `apply_inv(probs [..., num_bins]) -> x [...]`: the support's mean under `probs`,
    mapped back by h^-1 (`rlax.signed_parabolic`). `max_value` bounds h(x), not x: 20 covers |x| up to ~420.
    """
    rescaling = rlax.TxPair(
        functools.partial(rlax.signed_hyperbolic, eps=rescaling_epsilon),
        functools.partial(rlax.signed_parabolic, eps=rescaling_epsilon),
    )
    return rlax.muzero_pair(-max_value, max_value, num_bins, rescaling)


class UnrollTargets(NamedTuple):
    """Targets of one K-step unroll from a sequence's first row, and where each loss applies (masks in {0, 1})."""

    values: jax.Array  # [K + 1] n-step returns z_k at unroll steps k = 0 .. K
    value_mask: jax.Array  # [K + 1] 1 where step k acted in the first row's episode or is past its termination
    rewards: jax.Array  # [K] r_k, the reward after the action of step k
    reward_mask: jax.Array  # [K] the same for r_k
    policy_mask: jax.Array  # [K + 1] 1 where step k acted in the first row's episode


def unroll_targets(
    rewards: jax.Array,
    discounts: jax.Array,
    bootstrap_values: jax.Array,
    starts: jax.Array,
    *,
    num_unroll_steps: int,
    n_step: int,
) -> UnrollTargets:
    """MuZero's targets for the unroll from row 0 of one stored sequence (a `SequenceAdder` that CONTINUEs across
    episodes) of L >= K + n + 1 rows.

    Row t holds o_t, a_t, r_t (after a_t), gamma_t (the agent's discount times the environment's after a_t) and
    start_t. The row after an episode's last observation starts the next episode, so row t took an action exactly
    when start_{t + 1} is False (the episode's last row holds zeros for r_t, gamma_t). With v_t the value of o_t
    (e.g. a target network's):
      z_t   = r_t + gamma_t [(1 - c_t) v_{t + 1} + c_t z_{t + 1}], at most n rewards, then v  (`rlax`'s n-step)
      c_t   = 0 where row t + 1 is its episode's last row: z_t bootstraps from that last observation (times
              gamma_t: 0 after a termination, kept after a truncation), so two episodes' rewards never mix.
    The unroll's step k is row k while no episode starts in rows 1 .. k (alive_k). Past a termination the unroll
    goes on in an absorbing state (the paper's treatment of episode ends): from the episode's last row on, whatever
    the stored actions (the next episode's), every value and reward target is 0, so the model learns that nothing
    follows an end, and a search that looks past one sees it. After a truncation nothing is known past the end.
    Masks:
      policy_mask_k = alive_k and row k took an action (an absorbing state has no policy to learn);
      reward_mask_k = policy_mask_k, or step k is past a termination (r_k = 0);
      value_mask_k  = policy_mask_k, or step k is past a termination (z_k = 0).
    All outputs are stopped from gradients.

    Args:
      rewards: [L] r_t.
      discounts: [L] gamma_t.
      bootstrap_values: [L] v_t.
      starts: [L] start_of_episode_t (bool or {0, 1}).
      num_unroll_steps: K.
      n_step: n, the most rewards a value target sums before it bootstraps.
    """
    chex.assert_rank([rewards, discounts, bootstrap_values, starts], 1)
    chex.assert_equal_shape([rewards, discounts, bootstrap_values, starts])
    length = rewards.shape[0]
    if length < num_unroll_steps + n_step + 1:
        raise ValueError(
            f"unroll_targets: {length} rows cannot give {num_unroll_steps} steps of {n_step}-step targets "
            f"(it needs num_unroll_steps + n_step + 1 rows).")
    rewards, discounts, bootstrap_values = (x.astype(jnp.float32) for x in (rewards, discounts, bootstrap_values))
    acted = 1.0 - starts[1:].astype(jnp.float32)  # [L - 1]: row t took an action
    continues = jnp.concatenate([acted[1:], jnp.ones((1,), jnp.float32)])  # the row past the sequence counts as real
    returns = rlax.n_step_bootstrapped_returns(
        rewards[:-1], discounts[:-1], bootstrap_values[1:], n_step, lambda_t=continues
    )
    k = num_unroll_steps
    alive = jnp.cumprod(jnp.concatenate([jnp.ones((1,), jnp.float32), acted[:k]]))  # [K + 1]: no start in 1 .. k
    policy_mask = alive * acted[: k + 1]
    terminal_action = policy_mask[:k] * (discounts[:k] == 0).astype(jnp.float32)  # [K]: step k's action ended it
    absorbing = jnp.minimum(jnp.cumsum(jnp.concatenate([jnp.zeros((1,), jnp.float32), terminal_action])), 1.0)
    values = jnp.where(absorbing > 0, 0.0, returns[: k + 1])
    unroll_rewards = jnp.where(absorbing[:k] > 0, 0.0, rewards[:k])
    return jax.lax.stop_gradient(UnrollTargets(
        values=values, value_mask=jnp.maximum(policy_mask, absorbing), rewards=unroll_rewards,
        reward_mask=jnp.maximum(policy_mask[:k], absorbing[:k]), policy_mask=policy_mask,
    ))


def scale_gradient(x: jax.Array, scale: float) -> jax.Array:
    """x in the forward pass; its gradient times `scale` in the backward pass (MuZero halves the gradient that
    flows back through each dynamics step, so the unroll's total gradient stays bounded as K grows)."""
    return x * scale + jax.lax.stop_gradient(x) * (1.0 - scale)


def masked_cross_entropy(logits: jax.Array, target_probs: jax.Array, mask: jax.Array) -> jax.Array:
    """-sum_i target_i log softmax(logits)_i, times `mask`: `logits`, `target_probs` [..., N], `mask` [...]."""
    chex.assert_equal_shape([logits, target_probs])
    return -jnp.sum(jax.lax.stop_gradient(target_probs) * jax.nn.log_softmax(logits), axis=-1) * mask


def value_error_priority(values: jax.Array, targets: jax.Array, mask: jax.Array,
                         rescaling_epsilon: float = 1e-3) -> jax.Array:
    """MuZero's priority |v - z| (Schrittwieser et al., 2020), measured in the rescaled space,
    |h(v) - h(z)|, so that it stays on the scale of the default priority 1.0 new items enter replay with, whatever
    the returns' scale; 0 where `mask` is 0. All arguments [...]; stopped from gradients."""
    chex.assert_equal_shape([values, targets, mask])
    h = functools.partial(rlax.signed_hyperbolic, eps=rescaling_epsilon)
    return jax.lax.stop_gradient(jnp.abs(h(values) - h(targets)) * mask)
