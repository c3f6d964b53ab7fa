"""MPO: the E-step weights and temperature dual, the decoupled M-step and its multipliers, the agent's update step;
DMPO (`critic_type="categorical"`): the mixture target and a categorical critic that learns returns.

Pure JAX: every test here runs on both stacks (no Reverb).
"""

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from dm_env import specs

from acmelike.actors.continuous import to_unit
from acmelike.learners import NonFiniteLossError, SGDLearner
from acmelike.losses import (
    dual_value,
    e_step_weights,
    gaussian_kl,
    gaussian_log_prob,
    init_dual_params,
    categorical_mean,
    kl_constraint_dual_loss,
    mixture_logits,
    mpo_loss,
    nonparametric_kl,
    project_dual_params,
    temperature_dual_loss,
    weighted_log_likelihood_loss,
)
from fakes import continuous_spec as _spec
from fakes import transition_batch as _batch
from agents import mpo
from agents.mpo.acting import clipped_gaussian_core

N, B, A = 20, 16, 3
EPSILON, EPSILON_MEAN, EPSILON_STDDEV = 0.1, 0.01, 1e-3


def _q_values(spread, seed=0):
    return spread * jax.random.normal(jax.random.PRNGKey(seed), (N, B))


def _gaussians(seed=0):
    k1, k2, k3 = jax.random.split(jax.random.PRNGKey(seed), 3)
    mean = 0.5 * jax.random.normal(k1, (B, A))
    stddev = jnp.exp(0.3 * jax.random.normal(k2, (B, A)))
    actions = mean[None] + stddev[None] * jax.random.normal(k3, (N, B, A))
    return mean, stddev, actions


# --- E-step ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("temperature", [1e-3, 0.5, 1.0, 1e3])
def test_e_step_weights_are_a_distribution_over_the_samples_of_every_state(temperature):
    q = _q_values(10.0)
    weights = e_step_weights(q, jnp.float32(temperature))
    assert weights.shape == (N, B)
    assert np.all(np.asarray(weights) >= 0)
    np.testing.assert_allclose(jnp.sum(weights, axis=0), np.ones(B), rtol=1e-5)
    # Higher Q, higher weight, within each state.
    order_q, order_w = np.argsort(np.asarray(q), axis=0), np.argsort(np.asarray(weights), axis=0, kind="stable")
    if temperature < 1e3:
        np.testing.assert_array_equal(order_q[-1], order_w[-1])


def test_e_step_weights_go_from_greedy_to_uniform_as_the_temperature_rises():
    q = _q_values(1.0)
    greedy = e_step_weights(q, jnp.float32(1e-4))
    np.testing.assert_allclose(greedy, jax.nn.one_hot(jnp.argmax(q, axis=0), N, axis=0), atol=1e-4)
    np.testing.assert_allclose(e_step_weights(q, jnp.float32(1e6)), np.full((N, B), 1.0 / N), rtol=1e-4)
    kls = [float(jnp.mean(nonparametric_kl(e_step_weights(q, jnp.float32(t))))) for t in (0.01, 0.1, 1.0, 10.0)]
    assert np.all(np.diff(kls) < 0) and kls[0] <= np.log(N) + 1e-4 and kls[-1] >= 0, kls


def test_e_step_weights_are_stopped_from_gradients():
    q = _q_values(1.0)
    grads = jax.grad(lambda q, t: jnp.sum(e_step_weights(q, t) * q), argnums=(0, 1))(q, jnp.float32(1.0))
    # d/dq of sum(w * q) with w held fixed is w itself; the temperature gets nothing.
    np.testing.assert_allclose(grads[0], e_step_weights(q, jnp.float32(1.0)), rtol=1e-6)
    assert float(grads[1]) == 0.0


def test_temperature_dual_gradient_is_epsilon_minus_the_e_step_kl():
    q, temperature = _q_values(3.0), jnp.float32(0.7)
    gradient = jax.grad(temperature_dual_loss, argnums=1)(q, temperature, EPSILON)
    kl = jnp.mean(nonparametric_kl(e_step_weights(q, temperature)))
    np.testing.assert_allclose(gradient, EPSILON - kl, rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("log_temperature, violated", [(-3.0, True), (5.0, False)])
def test_temperature_rises_when_the_e_step_kl_exceeds_epsilon_and_falls_when_it_is_below(log_temperature, violated):
    # A small temperature makes the weights nearly greedy: KL(q || pi_old) near log N >> epsilon, the constraint is
    # violated, and the dual's gradient (epsilon - KL) is negative: a descent step raises the temperature, which
    # flattens the weights. A large temperature gives nearly uniform weights, KL near 0 < epsilon: it falls.
    q = _q_values(1.0)

    def loss(log_t):
        return temperature_dual_loss(q, dual_value(log_t), EPSILON)

    log_t = jnp.float32(log_temperature)
    kl = float(jnp.mean(nonparametric_kl(e_step_weights(q, dual_value(log_t)))))
    assert (kl > EPSILON) == violated, kl
    gradient = float(jax.grad(loss)(log_t))
    assert (gradient < 0) == violated, gradient
    stepped = dual_value(log_t - 0.1 * jnp.sign(gradient))
    assert (float(stepped) > float(dual_value(log_t))) == violated
    # And repeated descent steps on the dual bring the KL to epsilon.
    log_t = jax.jit(lambda x: jax.lax.fori_loop(0, 3000, lambda _, x: x - 0.05 * jax.grad(loss)(x), x))(log_t)
    kl = float(jnp.mean(nonparametric_kl(e_step_weights(q, dual_value(log_t)))))
    np.testing.assert_allclose(kl, EPSILON, rtol=0.05)


# --- M-step ---------------------------------------------------------------------------------------------------


def test_gaussian_log_prob_and_kl_match_closed_forms():
    mean, stddev, actions = _gaussians()
    expected = jnp.sum(jax.scipy.stats.norm.logpdf(actions, mean[None], stddev[None]), axis=-1)
    np.testing.assert_allclose(gaussian_log_prob(actions, mean, stddev), expected, rtol=1e-5)
    np.testing.assert_allclose(gaussian_kl(mean, stddev, mean, stddev), np.zeros((B, A)), atol=1e-6)
    kl = gaussian_kl(jnp.zeros((1, 1)), jnp.ones((1, 1)), jnp.ones((1, 1)), 2.0 * jnp.ones((1, 1)))
    np.testing.assert_allclose(kl, [[np.log(2.0) + (1.0 + 1.0) / 8.0 - 0.5]], rtol=1e-6)


def test_weighted_log_likelihood_moves_the_mean_toward_the_heavily_weighted_actions():
    mean, stddev, actions = _gaussians()
    q = -jnp.sum(jnp.square(actions - 1.0), axis=-1)  # actions near +1 are best
    weights = e_step_weights(q, jnp.float32(0.1))
    gradient = jax.grad(weighted_log_likelihood_loss, argnums=2)(actions, weights, mean, stddev)
    weighted_mean = jnp.sum(weights[..., None] * actions, axis=0)
    # Descent moves each mean toward the weighted mean of its samples.
    assert np.all(np.sign(-gradient) == np.sign(weighted_mean - mean))


def _kl_grads(online_mean, online_stddev, target_mean, target_stddev, actions, q):
    params = init_dual_params(A, init_log_temperature=1.0, init_log_alpha_mean=1.0, init_log_alpha_stddev=1.0)

    def loss(params):
        return mpo_loss(params, online_mean, online_stddev, target_mean, target_stddev, actions, q,
                        epsilon=EPSILON, epsilon_mean=EPSILON_MEAN, epsilon_stddev=EPSILON_STDDEV)

    output, grads = loss(params), jax.grad(lambda p: loss(p).loss)(params)
    return output, grads


def test_mean_multipliers_rise_when_the_mean_moved_too_far_and_fall_when_it_stayed_close():
    mean, stddev, actions = _gaussians()
    q = _q_values(1.0)
    # The online mean moved by one target stddev in every dimension: KL = 0.5 per dimension >> epsilon_mean.
    output, grads = _kl_grads(mean + stddev, stddev, mean, stddev, actions, q)
    np.testing.assert_allclose(output.kl_mean, np.full(A, 0.5), rtol=1e-5)
    assert np.all(np.asarray(grads.log_alpha_mean) < 0)  # descent raises alpha_mean
    # Unchanged online policy: KL = 0 < epsilon_mean, the multipliers fall.
    output, grads = _kl_grads(mean, stddev, mean, stddev, actions, q)
    np.testing.assert_allclose(output.kl_mean, np.zeros(A), atol=1e-6)
    assert np.all(np.asarray(grads.log_alpha_mean) > 0) and np.all(np.asarray(grads.log_alpha_stddev) > 0)


def test_stddev_multipliers_rise_when_the_stddev_moved_too_far_and_fall_when_it_stayed_close():
    mean, stddev, actions = _gaussians()
    q = _q_values(1.0)
    output, grads = _kl_grads(mean, 2.0 * stddev, mean, stddev, actions, q)
    assert np.all(np.asarray(output.kl_stddev) > EPSILON_STDDEV)
    assert np.all(np.asarray(grads.log_alpha_stddev) < 0)  # descent raises alpha_stddev
    assert np.all(np.asarray(grads.log_alpha_mean) > 0)  # the mean did not move: its constraint is slack
    # Only the mean moved: the stddev's constraint is slack (its KL is zero), its multipliers fall.
    output, grads = _kl_grads(mean + stddev, stddev, mean, stddev, actions, q)
    np.testing.assert_allclose(output.kl_stddev, np.zeros(A), atol=1e-6)
    assert np.all(np.asarray(grads.log_alpha_stddev) > 0) and np.all(np.asarray(grads.log_alpha_mean) < 0)


def test_kl_constraint_dual_loss_gradient_is_epsilon_minus_the_kl_and_the_penalty_sees_the_kl_only():
    kl = jnp.abs(jax.random.normal(jax.random.PRNGKey(1), (B, A)))
    alpha = jnp.full((A,), 2.0)
    (penalty_grad_kl, penalty_grad_alpha) = jax.grad(lambda k, a: kl_constraint_dual_loss(k, a, 0.1)[0],
                                                     argnums=(0, 1))(kl, alpha)
    (dual_grad_kl, dual_grad_alpha) = jax.grad(lambda k, a: kl_constraint_dual_loss(k, a, 0.1)[1],
                                               argnums=(0, 1))(kl, alpha)
    np.testing.assert_allclose(penalty_grad_kl, np.full((B, A), 2.0 / B), rtol=1e-6)
    np.testing.assert_allclose(penalty_grad_alpha, np.zeros(A))
    np.testing.assert_allclose(dual_grad_kl, np.zeros((B, A)))
    np.testing.assert_allclose(dual_grad_alpha, 0.1 - jnp.mean(kl, axis=0), rtol=1e-6)


@pytest.mark.parametrize("per_dimension", [True, False])
def test_mpo_loss_shapes_and_stop_gradients(per_dimension):
    mean, stddev, actions = _gaussians()
    q = _q_values(1.0)
    params = init_dual_params(A, init_log_temperature=1.0, init_log_alpha_mean=1.0, init_log_alpha_stddev=1.0,
                              per_dimension=per_dimension)
    size = A if per_dimension else 1
    assert params.log_temperature.shape == () and params.log_alpha_mean.shape == (size,)

    def loss(online_mean, online_stddev, target_mean, target_stddev, actions, q):
        return mpo_loss(params, online_mean, online_stddev, target_mean, target_stddev, actions, q,
                        epsilon=EPSILON, epsilon_mean=EPSILON_MEAN, epsilon_stddev=EPSILON_STDDEV)

    output = loss(mean + 0.1, stddev * 1.1, mean, stddev, actions, q)
    for name in ("loss", "policy_loss", "kl_penalty", "dual_loss", "temperature_loss", "alpha_loss",
                 "kl_nonparametric", "temperature"):
        assert getattr(output, name).shape == (), name
    for name in ("kl_mean", "kl_stddev", "alpha_mean", "alpha_stddev"):
        assert getattr(output, name).shape == (size,), name
    np.testing.assert_allclose(output.loss, output.policy_loss + output.kl_penalty + output.dual_loss, rtol=1e-6)
    grads = jax.grad(lambda *args: loss(*args).loss, argnums=tuple(range(6)))(mean + 0.1, stddev * 1.1, mean,
                                                                              stddev, actions, q)
    assert np.any(np.asarray(grads[0]) != 0) and np.any(np.asarray(grads[1]) != 0)  # the online policy learns
    for stopped in grads[2:]:  # targets, sampled actions and Q values are constants
        np.testing.assert_array_equal(stopped, np.zeros_like(stopped))


def test_dual_params_are_softplus_positive_and_projected_from_below():
    params = init_dual_params(A, init_log_temperature=-40.0, init_log_alpha_mean=10.0, init_log_alpha_stddev=0.0)
    projected = project_dual_params(params)
    assert float(projected.log_temperature) == -18.0
    np.testing.assert_array_equal(projected.log_alpha_mean, params.log_alpha_mean)
    assert float(dual_value(projected.log_temperature)) > 0
    np.testing.assert_allclose(dual_value(jnp.float32(10.0)), 10.0, rtol=1e-4)


# --- The agent ------------------------------------------------------------------------------------------------


def _small(**overrides):
    config = mpo.MPOConfig(policy_hidden_sizes=(32,), critic_hidden_sizes=(32,), num_samples=5, **overrides)
    spec = _spec(specs.BoundedArray((2,), np.float32, -2.0, 2.0, name="action"))
    return config, spec, mpo.make_networks(spec, config)


@pytest.mark.parametrize("critic_type", ["scalar", "categorical"])
def test_update_changes_every_network_and_dual_and_polyak_averages_the_targets(critic_type):
    config, spec, networks = _small(tau=0.1, critic_type=critic_type)
    state = mpo.learning.init_training_state(networks, config, jax.random.PRNGKey(0))
    assert state.dual_params.log_alpha_mean.shape == (2,)
    new, metrics, extras = jax.jit(mpo.learning.make_update_step(networks, config))(state, _batch(spec, 16))
    leaves = jax.tree_util.tree_leaves
    for name in ("policy_params", "critic_params", "dual_params"):
        before, after = leaves(getattr(state, name)), leaves(getattr(new, name))
        assert any(not np.allclose(a, b) for a, b in zip(before, after)), name
    for online, target in (("policy_params", "target_policy_params"), ("critic_params", "target_critic_params")):
        for old, current, updated in zip(leaves(getattr(state, target)), leaves(getattr(new, online)),
                                         leaves(getattr(new, target))):
            np.testing.assert_allclose(updated, 0.9 * old + 0.1 * current, rtol=1e-5, atol=1e-6)
    assert set(mpo.learning.LOSS_KEYS) <= set(metrics) and extras == {}
    assert all(np.isfinite(float(v)) for v in metrics.values()), metrics
    assert int(new.steps) == 1


def test_mixture_logits_are_the_logits_of_the_mean_distribution():
    logits = 3.0 * jax.random.normal(jax.random.PRNGKey(0), (N, B, 7))
    mixed = mixture_logits(logits)
    assert mixed.shape == (B, 7)
    np.testing.assert_allclose(jax.nn.softmax(mixed), jnp.mean(jax.nn.softmax(logits), axis=0), rtol=1e-5, atol=1e-7)


def test_dmpo_critic_learns_the_return_between_its_atoms():
    """Terminal transitions (discount 0) with reward -300: the target is -300 projected onto atoms 20 apart, so
    the categorical critic's mean must come to -300, and a critic that ignored the reward (or projected onto the
    wrong support) would not."""
    config, spec, networks = _small(critic_type="categorical", critic_learning_rate=1e-2, num_atoms=51,
                                    v_min=-1000.0, v_max=0.0)
    batch = _batch(spec, 64, reward=-300.0)
    batch = batch._replace(data=batch.data._replace(discount=np.zeros(64, np.float32)))
    state = mpo.learning.init_training_state(networks, config, jax.random.PRNGKey(0))
    update = jax.jit(mpo.learning.make_update_step(networks, config))
    for _ in range(300):
        state, metrics, _ = update(state, batch)
    logits = networks.critic.apply(state.critic_params, batch.data.observation,
                                   to_unit(batch.data.action, networks.bounds))
    assert logits.shape == (64, 51)
    np.testing.assert_allclose(categorical_mean(logits, jnp.asarray(networks.support)), -300.0, atol=10.0)
    np.testing.assert_allclose(metrics["mean_q"], -300.0, atol=10.0)


def test_nan_in_the_critic_loss_stops_the_learner_and_keeps_the_state():
    config, spec, networks = _small()
    parts = mpo.AGENT.make_builder(config).learning_parts(networks=networks, environment_spec=spec,
                                                          random_key=jax.random.PRNGKey(0))
    bad = _batch(spec, config.batch_size * config.num_sgd_steps_per_step, reward=np.nan)
    learner = SGDLearner(state=parts.state, update_step=parts.update_step, iterator=iter([bad]), variables={},
                         num_sgd_steps_per_step=config.num_sgd_steps_per_step, loss_keys=parts.loss_keys,
                         name="MPO learner")
    learner.step()
    with pytest.raises(NonFiniteLossError, match="MPO learner: loss 'critic_loss' is nan"):
        learner.wait()
    for before, after in zip(jax.tree_util.tree_leaves(parts.state), jax.tree_util.tree_leaves(learner.state)):
        np.testing.assert_array_equal(before, after)


def test_policy_outputs_a_bounded_mean_and_a_positive_stddev_of_the_configured_size():
    config, spec, networks = _small(init_stddev=0.3, min_stddev=1e-3)
    params = networks.policy.init(jax.random.PRNGKey(0))
    mean, stddev = networks.policy.apply(params, 100.0 * jnp.ones((4, 3)))
    assert mean.shape == stddev.shape == (4, 2)
    assert np.all(np.abs(np.asarray(mean)) <= 1.0) and np.all(np.asarray(stddev) >= 1e-3)
    np.testing.assert_allclose(networks.policy.apply(params, jnp.zeros((1, 3)))[1], [[0.301, 0.301]], rtol=1e-2)
    q = networks.critic.apply(networks.critic.init(jax.random.PRNGKey(1)), jnp.zeros((4, 3)), jnp.zeros((4, 2)))
    assert q.shape == (4,)


@pytest.mark.parametrize("greedy", [False, True])
def test_actor_core_keeps_actions_inside_the_bounds(greedy):
    spec = _spec()
    core = clipped_gaussian_core(lambda params, obs: (jnp.full((1, 1), 0.9), jnp.full((1, 1), 5.0)),
                                 mpo.make_networks(spec, mpo.MPOConfig()).bounds, greedy=greedy)
    state = core.init(jax.random.PRNGKey(0))
    actions = []
    for _ in range(50):
        action, state = core.select_action(None, jnp.zeros(3), state)
        actions.append(float(action[0]))
    assert min(actions) >= -2.0 and max(actions) <= 2.0
    if greedy:
        np.testing.assert_allclose(actions, 1.8, rtol=1e-6)
    else:
        assert len(set(actions)) > 2


@pytest.mark.parametrize("field, value, allowed", [
    ("num_samples", 1, ">= 2"), ("epsilon", 0.0, "> 0"), ("epsilon_stddev", -1.0, "> 0"), ("tau", 0.0, r"in \(0, 1\]"),
    ("critic_type", "quantile", "one of scalar, categorical"), ("v_max", -2000.0, "> v_min"),
])
def test_config_errors_name_the_field(field, value, allowed):
    with pytest.raises(ValueError, match=rf"MPOConfig.{field} = {value!r}; it must be {allowed}"):
        dataclasses.replace(mpo.MPOConfig(), **{field: value})


def test_discrete_actions_are_refused_naming_mpo_and_the_spec():
    with pytest.raises(ValueError, match="MPO.*DiscreteArray"):
        mpo.make_networks(_spec(specs.DiscreteArray(2, name="action")), mpo.MPOConfig())
