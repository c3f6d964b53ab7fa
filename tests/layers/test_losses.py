"""Losses against values computed by hand."""

import math

import jax.numpy as jnp
import numpy as np
import pytest

from acmelike.losses import double_q_td_loss, generalized_advantage_estimation, ppo_loss


def test_double_q_uses_online_argmax_and_target_values():
    q_tm1 = jnp.array([[1.0, 2.0], [0.5, 0.0]])
    a_tm1 = jnp.array([1, 0])
    r_t = jnp.array([1.0, -1.0])
    discount_t = jnp.array([0.9, 0.0])
    q_t_selector = jnp.array([[0.0, 5.0], [3.0, 0.0]])  # online net picks a=1, then a=0
    q_t_value = jnp.array([[10.0, 4.0], [7.0, 8.0]])  # target net evaluates them: 4 and 7
    # targets: 1 + 0.9 * 4 = 4.6 ; -1 + 0 * 7 = -1 ; td = target - q_tm1[a] = 2.6, -1.5
    loss, td = double_q_td_loss(q_tm1, a_tm1, r_t, discount_t, q_t_value, q_t_selector, jnp.ones(2), 0.0)
    np.testing.assert_allclose(td, [2.6, -1.5], rtol=1e-6)
    np.testing.assert_allclose(loss, 0.5 * (2.6**2 + 1.5**2) / 2, rtol=1e-6)


def test_double_q_huber_and_importance_weights():
    q_tm1 = jnp.array([[0.0], [0.0]])
    ones = jnp.ones(2)
    # td errors 3 (linear part of Huber with delta 1: 3 - 0.5 = 2.5) and 0.5 (quadratic: 0.125)
    loss, td = double_q_td_loss(
        q_tm1, jnp.array([0, 0]), jnp.array([3.0, 0.5]), jnp.zeros(2), q_tm1, q_tm1, jnp.array([1.0, 0.5]), 1.0
    )
    np.testing.assert_allclose(td, [3.0, 0.5])
    np.testing.assert_allclose(loss, (1.0 * 2.5 + 0.5 * 0.125) / 2, rtol=1e-6)
    with pytest.raises(AssertionError):  # rank checks at the boundary
        double_q_td_loss(q_tm1[0], jnp.array([0]), ones, ones, q_tm1, q_tm1, ones)


def test_gae_matches_hand_computation_and_cuts_episodes():
    r = jnp.array([1.0, 2.0, 3.0])
    discount = jnp.array([0.5, 0.5, 0.5])
    values = jnp.array([1.0, 1.0, 2.0, 4.0])
    lam = 0.5
    # deltas: 1 + .5*1 - 1 = .5 ; 2 + .5*2 - 1 = 2 ; 3 + .5*4 - 2 = 3
    a = generalized_advantage_estimation(r, discount, values, lam, jnp.ones(3))
    a2 = 3.0
    a1 = 2.0 + lam * 0.5 * a2
    a0 = 0.5 + lam * 0.5 * a1
    np.testing.assert_allclose(a, [a0, a1, a2], rtol=1e-6)
    cut = generalized_advantage_estimation(r, discount, values, lam, jnp.array([1.0, 0.0, 1.0]))
    np.testing.assert_allclose(cut, [0.5 + lam * 0.5 * 2.0, 2.0, 3.0], rtol=1e-6)


def test_ppo_loss_clips_and_masks():
    logits = jnp.zeros((2, 2))  # pi(a|s) = 0.5 for both actions
    actions = jnp.array([0, 1])
    behaviour = jnp.log(jnp.array([0.25, 0.25]))  # ratio 2 -> clipped at 1.2 for a positive advantage
    out = ppo_loss(
        logits,
        values=jnp.array([0.5, 100.0]),
        actions=actions,
        behaviour_log_probs=behaviour,
        advantages=jnp.array([1.0, 1000.0]),
        returns=jnp.array([1.5, -100.0]),
        mask=jnp.array([1.0, 0.0]),  # the second step is padding and must not count
        clip_epsilon=0.2,
        value_cost=0.5,
        entropy_cost=0.01,
    )
    np.testing.assert_allclose(out.policy_loss, -1.2, rtol=1e-6)
    np.testing.assert_allclose(out.value_loss, 0.5, rtol=1e-6)
    np.testing.assert_allclose(out.entropy, math.log(2), rtol=1e-6)
    np.testing.assert_allclose(out.loss, -1.2 + 0.5 * 0.5 - 0.01 * math.log(2), rtol=1e-6)
    np.testing.assert_allclose(out.clip_fraction, 1.0)
    np.testing.assert_allclose(out.approx_kl, (2 - 1) - math.log(2), rtol=1e-6)


def test_ppo_loss_negative_advantage_takes_unclipped_pessimistic_term():
    out = ppo_loss(
        jnp.zeros((1, 2)), jnp.zeros(1), jnp.array([0]), jnp.log(jnp.array([0.25])), jnp.array([-1.0]),
        jnp.zeros(1), jnp.ones(1), clip_epsilon=0.2, value_cost=0.0, entropy_cost=0.0,
    )
    # min(2 * -1, 1.2 * -1) = -2 -> loss 2
    np.testing.assert_allclose(out.policy_loss, 2.0, rtol=1e-6)
