"""Continuous control: action bounds, squashed and noisy actor cores, shared losses, SAC/TD3/D4PG update steps."""

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import rlax
from dm_env import specs

from acmelike.actors import (
    gaussian_noise_core,
    squashed_gaussian_core,
    squashed_gaussian_sample,
    to_bounds,
    to_unit,
    uniform_warmup_core,
)
from acmelike.learners import NonFiniteLossError, SGDLearner
from acmelike.losses import (
    categorical_projection,
    categorical_td_loss,
    clipped_double_q_target,
    critic_regression_loss,
    deterministic_policy_gradient_loss,
    sac_temperature_loss,
)
from acmelike.specs import continuous_action_bounds
from fakes import PENDULUM_ACTIONS
from fakes import continuous_spec as _spec
from fakes import transition_batch as _batch
from agents import d4pg, dqn, mpo, ppo, sac, td3

CONTINUOUS = [(sac, "SAC"), (td3, "TD3"), (d4pg, "D4PG")]


# --- Action bounds --------------------------------------------------------------------------------------------


def test_bounds_of_float64_spec_are_float32_values_inside_it():
    # 0.1 and -0.7 have no float32 representation: the nearest float32 lies outside one of the two bounds.
    spec = _spec(specs.BoundedArray((2,), np.float64, [-0.7, 0.1], [0.1, 0.3]))
    bounds = continuous_action_bounds(spec, agent="SAC")
    assert bounds.minimum.dtype == np.float32 and bounds.maximum.dtype == np.float32
    assert np.all(bounds.minimum.astype(np.float64) >= spec.actions.minimum)
    assert np.all(bounds.maximum.astype(np.float64) <= spec.actions.maximum)
    np.testing.assert_allclose(bounds.maximum, [0.1, 0.3], rtol=1e-6)


def test_float32_spec_bounds_move_inward_by_at_most_one_step():
    bounds = continuous_action_bounds(_spec(PENDULUM_ACTIONS), agent="SAC")
    assert -2.0 < bounds.minimum[0] < -2.0 + 1e-6 and 2.0 - 1e-6 < bounds.maximum[0] < 2.0


@pytest.mark.parametrize(
    "actions, match",
    [
        (specs.BoundedArray((1,), np.float32, -np.inf, np.inf), "finite action bounds.*RescaleAction"),
        (specs.BoundedArray((1,), np.float32, 0.0, np.inf), "finite action bounds"),
        (specs.Array((1,), np.float32), "continuous action space"),
        (specs.DiscreteArray(3), "continuous action space"),
        (specs.BoundedArray((2, 2), np.float32, -1.0, 1.0), "flat floating-point action vector"),
    ],
)
def test_bad_action_specs_are_rejected_naming_agent_and_spec(actions, match):
    with pytest.raises(ValueError, match=match) as error:
        continuous_action_bounds(_spec(actions), agent="TD3")
    assert "TD3" in str(error.value) and repr(actions) in str(error.value)


@pytest.mark.parametrize("agent, name", CONTINUOUS)
def test_continuous_agent_given_discrete_actions_fails_naming_agent_and_spec(agent, name):
    with pytest.raises(ValueError) as error:
        agent.make_networks(_spec(specs.DiscreteArray(2, name="action")), agent.AGENT.config_class())
    message = str(error.value)
    assert name in message and "DiscreteArray" in message and "BoundedArray" in message


@pytest.mark.parametrize("agent, name", [(dqn, "DQN"), (ppo, "PPO")])
def test_discrete_agent_given_box_actions_fails_naming_agent_and_spec(agent, name):
    with pytest.raises(ValueError) as error:
        agent.make_networks(_spec(PENDULUM_ACTIONS), agent.AGENT.config_class())
    assert name in str(error.value) and "BoundedArray" in str(error.value)


@pytest.mark.parametrize(
    "agent, environment, kind", [("dqn", "Pendulum-v1", "continuous"), ("sac", "CartPole-v1", "discrete")]
)
def test_the_command_line_names_the_agents_that_fit_the_environment(agent, environment, kind):
    from launch.experiments.make import make_experiment_config
    from launch.registry import agents_for_action_space

    with pytest.raises(ValueError) as error:
        make_experiment_config(agent=agent, environment=environment, max_num_actor_steps=1)
    message = str(error.value)
    assert agent.upper() in message and "BoundedArray" in message and "DiscreteArray" in message
    assert f"Agents for {kind} actions: {', '.join(agents_for_action_space(kind))}." in message
    assert {"sac", "td3", "d4pg"} <= set(agents_for_action_space("continuous"))


def test_to_bounds_stays_inside_for_extreme_inputs_and_inverts_to_unit():
    spec = _spec(specs.BoundedArray((3,), np.float64, [-0.7, 0.1, -2.0], [0.1, 0.3, 2.0]))
    bounds = continuous_action_bounds(spec, agent="SAC")
    extreme = jnp.array([[-1e30, 1e30, 1.0], [1.0, -1.0, -1.0], [jnp.inf, -jnp.inf, 0.5]], jnp.float32)
    actions = np.asarray(to_bounds(extreme, bounds)).astype(np.float64)
    assert np.all(actions >= spec.actions.minimum) and np.all(actions <= spec.actions.maximum)
    unit = jnp.array([[-0.5, 0.0, 0.25]], jnp.float32)
    np.testing.assert_allclose(to_unit(to_bounds(unit, bounds), bounds), unit, atol=1e-6)


def test_squashed_gaussian_log_prob_matches_change_of_variables_and_is_finite_at_saturation():
    mean, log_std = jnp.array([[0.3, -1.0]]), jnp.array([[-0.5, 0.2]])
    action, log_prob = squashed_gaussian_sample(mean, log_std, jax.random.PRNGKey(1))
    u = jnp.arctanh(action)
    expected = jnp.sum(jax.scipy.stats.norm.logpdf(u, mean, jnp.exp(log_std)) - jnp.log(1 - action**2), axis=-1)
    np.testing.assert_allclose(log_prob, expected, rtol=1e-4)
    saturated, log_prob = squashed_gaussian_sample(jnp.array([[50.0]]), jnp.array([[-5.0]]), jax.random.PRNGKey(0))
    assert float(saturated[0, 0]) == 1.0 and np.all(np.isfinite(log_prob))


@pytest.mark.parametrize("greedy", [False, True])
def test_squashed_gaussian_core_actions_pass_the_gymnasium_bounds_check_for_extreme_means(greedy):
    gym_spec = specs.BoundedArray((2,), np.float64, [-0.7, 0.1], [0.1, 0.3])  # float64 bounds, like a gym Box
    bounds = continuous_action_bounds(_spec(gym_spec), agent="SAC")
    policy = lambda params, obs: (jnp.full((1, 2), params), jnp.full((1, 2), 2.0))  # noqa: E731
    core = squashed_gaussian_core(policy, bounds, greedy=greedy)
    select = jax.jit(core.select_action)
    state = core.init(jax.random.PRNGKey(0))
    for mean in (-1e30, -30.0, 0.0, 30.0, 1e30):
        for _ in range(5):
            action, state = select(jnp.float32(mean), jnp.zeros(3), state)
            gym_spec.validate(np.asarray(action).astype(np.float64))  # what the gymnasium adapter checks


def test_gaussian_noise_core_clips_noisy_actions_into_bounds_and_is_deterministic_without_noise():
    bounds = continuous_action_bounds(_spec(PENDULUM_ACTIONS), agent="TD3")
    policy = lambda params, obs: jnp.full((1, 1), params)  # noqa: E731
    noisy = gaussian_noise_core(policy, bounds, sigma=10.0)
    state = noisy.init(jax.random.PRNGKey(0))
    actions = []
    for _ in range(20):
        action, state = noisy.select_action(jnp.float32(0.99), jnp.zeros(3), state)
        actions.append(float(action[0]))
    assert min(actions) >= bounds.minimum[0] and max(actions) <= bounds.maximum[0]
    assert len(set(actions)) > 2  # the noise is there
    greedy = gaussian_noise_core(policy, bounds, sigma=0.0)
    action, _ = greedy.select_action(jnp.float32(0.5), jnp.zeros(3), greedy.init(jax.random.PRNGKey(0)))
    np.testing.assert_allclose(action, [1.0], rtol=1e-6)


def test_uniform_warmup_core_covers_the_box_for_its_steps_then_hands_over_across_episodes():
    bounds = continuous_action_bounds(_spec(PENDULUM_ACTIONS), agent="TD3")  # [-2, 2]
    policy = lambda params, obs: jnp.full((1, 1), params)  # noqa: E731
    inner = gaussian_noise_core(policy, bounds, sigma=0.0)  # always 0.5 * 2 = 1.0
    core = uniform_warmup_core(inner, bounds, num_steps=200)
    state = core.init(jax.random.PRNGKey(0))
    select = jax.jit(core.select_action)
    actions = []
    for step in range(210):
        if step % 50 == 0:
            state = core.on_episode_start(state)  # episodes do not reset the count
        action, state = select(jnp.float32(0.5), jnp.zeros(3), state)
        actions.append(float(action[0]))
    warm = np.array(actions[:200])
    assert warm.min() >= -2.0 and warm.max() <= 2.0
    assert warm.min() < -1.5 and warm.max() > 1.5 and abs(warm.mean()) < 0.4  # uniform over the box, not near 1
    np.testing.assert_allclose(actions[200:], 1.0, rtol=1e-6)  # then the wrapped policy acts
    assert core.get_extras(state) == ()
    assert uniform_warmup_core(inner, bounds, num_steps=0) is inner  # no warm-up: the core and its stream unchanged
    with pytest.raises(ValueError, match="num_steps must be >= 0"):
        uniform_warmup_core(inner, bounds, num_steps=-1)


@pytest.mark.parametrize("agent, name", CONTINUOUS + [(mpo, "MPO")])
def test_continuous_agents_warm_up_uniformly_while_acting_but_never_while_evaluating(agent, name):
    config, spec, networks = _small(agent, random_warmup_steps=100)
    params = networks.policy.init(jax.random.PRNGKey(1))
    observation = jnp.zeros(spec.observations.shape, jnp.float32)

    def actions(config, evaluation):
        core = agent.AGENT.make_builder(config).make_policy(networks=networks, environment_spec=spec,
                                                            evaluation=evaluation)
        state, taken = core.init(jax.random.PRNGKey(0)), []
        for _ in range(20):
            action, state = core.select_action(params, observation, state)
            taken.append(np.asarray(action))
        return np.stack(taken)

    without = dataclasses.replace(config, random_warmup_steps=0)
    assert not np.allclose(actions(config, False), actions(without, False))  # acting: the uniform draws
    np.testing.assert_array_equal(actions(config, True), actions(without, True))  # evaluating: the policy alone
    with pytest.raises(ValueError, match=rf"{type(config).__name__}.random_warmup_steps = -1; it must be >= 0"):
        dataclasses.replace(config, random_warmup_steps=-1)


# --- Losses ---------------------------------------------------------------------------------------------------


def test_clipped_double_q_target_takes_the_minimum_and_adds_the_entropy_bonus():
    q_t = jnp.array([[1.0, 5.0], [2.0, 3.0]])
    target = clipped_double_q_target(jnp.array([1.0, 0.0]), jnp.array([0.5, 0.0]), q_t, entropy_t=jnp.array([2.0, 9.0]))
    np.testing.assert_allclose(target, [1.0 + 0.5 * (1.0 + 2.0), 0.0])


def test_temperature_gradient_raises_alpha_below_the_target_entropy_and_lowers_it_above():
    grad = jax.grad(sac_temperature_loss)
    low_entropy_log_prob = jnp.full((4,), 2.0)  # entropy -2 < target -1
    high_entropy_log_prob = jnp.full((4,), -1.0)  # entropy 1 > target -1
    assert float(grad(jnp.float32(0.0), low_entropy_log_prob, -1.0)) < 0  # gradient descent raises log alpha
    assert float(grad(jnp.float32(0.0), high_entropy_log_prob, -1.0)) > 0


def test_dpg_loss_gradient_moves_actions_up_the_critic():
    actions = jnp.array([[0.2, -0.1]])
    dq_da = jnp.array([[1.0, -3.0]])
    grad = jax.grad(lambda a: deterministic_policy_gradient_loss(a, dq_da))(actions)
    np.testing.assert_allclose(grad, -dq_da)


def test_categorical_projection_matches_a_hand_computed_case():
    support = jnp.array([0.0, 1.0, 2.0])
    # Mass 0.5 at 0.5 splits evenly between atoms 0 and 1; 0.25 at 1.75 gives 0.25 * (0.25, 0.75) to atoms 1, 2;
    # 0.25 at 5.0 is beyond v_max and lands on atom 2.
    values = jnp.array([[0.5, 1.75, 5.0]])
    probs = jnp.array([[0.5, 0.25, 0.25]])
    projected = categorical_projection(values, probs, support)
    np.testing.assert_allclose(projected, [[0.25, 0.25 + 0.0625, 0.1875 + 0.25]], atol=1e-6)


def test_categorical_projection_is_rlaxs_on_an_uneven_support():
    """rlax's categorical_l2_project, vmapped, on a support of uneven gaps, with values below, between, on and above
    its atoms, and fewer source atoms than target atoms."""
    rng = np.random.default_rng(0)
    support = jnp.asarray(np.sort(rng.uniform(-10.0, 10.0, size=7)), jnp.float32)
    values = jnp.asarray(rng.uniform(-15.0, 15.0, size=(32, 5)), jnp.float32)
    values = values.at[0, :3].set(support[:3])  # exactly on atoms
    probs = jax.nn.softmax(jnp.asarray(rng.normal(size=(32, 5)), jnp.float32))
    expected = jax.vmap(rlax.categorical_l2_project, in_axes=(0, 0, None))(values, probs, support)
    np.testing.assert_allclose(categorical_projection(values, probs, support), expected, atol=1e-6)


@pytest.mark.filterwarnings("ignore:Rlax categorical_cross_entropy:PendingDeprecationWarning")
def test_categorical_td_loss_is_the_cross_entropy_to_the_projected_target():
    support = jnp.linspace(-2.0, 2.0, 5)
    rng = np.random.default_rng(0)
    logits_tm1, logits_t = jnp.asarray(rng.normal(size=(2, 4, 5)), jnp.float32)
    r_t, discount_t = jnp.array([0.5, -1.0, 0.0, 3.0]), jnp.array([0.9, 0.0, 1.0, 0.5])
    loss, per_example = categorical_td_loss(logits_tm1, r_t, discount_t, logits_t, support)
    for b in range(4):
        target = rlax.categorical_l2_project(r_t[b] + discount_t[b] * support, jax.nn.softmax(logits_t[b]), support)
        cross_entropy = -jnp.sum(target * jax.nn.log_softmax(logits_tm1[b]))
        np.testing.assert_allclose(per_example[b], cross_entropy, rtol=1e-5)
        np.testing.assert_allclose(
            per_example[b],
            rlax.categorical_td_learning(support, logits_tm1[b], r_t[b], discount_t[b], support, logits_t[b]),
            rtol=1e-5,
        )
    np.testing.assert_allclose(loss, jnp.mean(per_example), rtol=1e-6)
    # The target is stopped from gradients: the loss does not depend on logits_t through its gradient.
    grad_t = jax.grad(lambda lt: categorical_td_loss(logits_tm1, r_t, discount_t, lt, support)[0])(logits_t)
    np.testing.assert_allclose(grad_t, 0.0)


# --- Update steps ---------------------------------------------------------------------------------------------


def _small(agent, **overrides):
    config = agent.AGENT.config_class(policy_hidden_sizes=(32,), critic_hidden_sizes=(32,), **overrides)
    spec = _spec(PENDULUM_ACTIONS)
    return config, spec, agent.make_networks(spec, config)


def test_sac_temperature_moves_toward_the_target_entropy():
    # A target far above the policy's entropy raises alpha; one far below lowers it.
    for target, direction in ((5.0, 1), (-20.0, -1)):
        config, spec, networks = _small(sac, target_entropy=target, temperature_learning_rate=1e-2)
        state = sac.learning.init_training_state(networks, config, jax.random.PRNGKey(0))
        update = jax.jit(sac.learning.make_update_step(networks, config))
        batch = _batch(spec, 32)
        alphas = []
        for _ in range(10):
            state, metrics, _ = update(state, batch)
            alphas.append(float(metrics["alpha"]))
        assert np.all(direction * np.diff([1.0] + alphas) > 0), alphas


def test_sac_temperature_stays_fixed_with_a_zero_learning_rate():
    config, spec, networks = _small(sac, initial_temperature=0.2, temperature_learning_rate=0.0)
    state = sac.learning.init_training_state(networks, config, jax.random.PRNGKey(0))
    update = jax.jit(sac.learning.make_update_step(networks, config))
    for _ in range(5):
        state, metrics, _ = update(state, _batch(spec, 32))
    assert float(metrics["alpha"]) == pytest.approx(0.2, rel=1e-6)
    with pytest.raises(ValueError, match=r"SACConfig.temperature_learning_rate = -0.1; it must be >= 0"):
        dataclasses.replace(config, temperature_learning_rate=-0.1)


def test_sac_update_changes_every_network_and_polyak_averages_the_targets():
    config, spec, networks = _small(sac, tau=0.1)
    state = sac.learning.init_training_state(networks, config, jax.random.PRNGKey(0))
    new, metrics, _ = jax.jit(sac.learning.make_update_step(networks, config))(state, _batch(spec, 16))
    leaves = lambda tree: jax.tree_util.tree_leaves(tree)  # noqa: E731
    for name in ("policy_params", "critic_params", "log_alpha"):
        assert any(not np.allclose(a, b) for a, b in zip(leaves(getattr(state, name)), leaves(getattr(new, name))))
    for old_target, critic, target in zip(
        leaves(state.target_critic_params), leaves(new.critic_params), leaves(new.target_critic_params)
    ):
        np.testing.assert_allclose(target, 0.9 * old_target + 0.1 * critic, rtol=1e-5, atol=1e-6)
    assert all(np.isfinite(float(v)) for v in metrics.values())


def test_td3_updates_policy_and_targets_only_every_policy_delay_steps():
    config, spec, networks = _small(td3, policy_delay=3)
    state = td3.learning.init_training_state(networks, config, jax.random.PRNGKey(0))
    update = jax.jit(td3.learning.make_update_step(networks, config))
    batch = _batch(spec, 16)
    leaves = jax.tree_util.tree_leaves
    changed = []
    for step in range(1, 7):
        new, _, _ = update(state, batch)
        policy_moved = any(not np.array_equal(a, b) for a, b in zip(leaves(state.policy_params), leaves(new.policy_params)))
        target_moved = any(
            not np.array_equal(a, b) for a, b in zip(leaves(state.target_critic_params), leaves(new.target_critic_params))
        )
        critic_moved = any(not np.array_equal(a, b) for a, b in zip(leaves(state.critic_params), leaves(new.critic_params)))
        assert critic_moved and policy_moved == target_moved
        changed.append(policy_moved)
        state = new
    assert changed == [False, False, True, False, False, True]


def test_td3_target_smoothing_noise_stays_within_the_clip_and_the_unit_box():
    target_actions = jnp.array([[0.0], [0.9], [-0.95]]).repeat(1000, axis=0)
    smoothed = td3.learning.smoothed_target_actions(target_actions, jax.random.PRNGKey(0), 0.5, 0.2)
    noise = np.asarray(smoothed - target_actions)
    assert np.all(np.abs(noise) <= 0.2 + 1e-6) and np.all(np.abs(smoothed) <= 1.0)
    assert np.abs(noise[:1000]).max() > 0.19  # the clip is reached (std 0.5 >> 0.2), not just never tested


def test_d4pg_critic_loss_equals_the_cross_entropy_to_the_projected_target():
    config, spec, networks = _small(d4pg, num_atoms=11, v_min=-10.0, v_max=10.0)
    state = d4pg.learning.init_training_state(networks, config, jax.random.PRNGKey(0))
    batch = _batch(spec, 8)
    _, metrics, extras = jax.jit(d4pg.learning.make_update_step(networks, config))(state, batch)
    t = batch.data
    support = jnp.asarray(networks.support)
    logits_tm1 = networks.critic.apply(state.critic_params, t.observation, to_unit(t.action, networks.bounds))
    next_actions = networks.policy.apply(state.target_policy_params, t.next_observation)
    logits_t = networks.critic.apply(state.target_critic_params, t.next_observation, next_actions)
    target = categorical_projection(t.reward[:, None] + t.discount[:, None] * support, jax.nn.softmax(logits_t), support)
    cross_entropy = -jnp.sum(target * jax.nn.log_softmax(logits_tm1), axis=-1)
    np.testing.assert_allclose(extras["priorities"], cross_entropy, rtol=1e-5)
    np.testing.assert_allclose(metrics["critic_loss"], jnp.mean(cross_entropy), rtol=1e-5)


@pytest.mark.parametrize("agent, name", CONTINUOUS)
def test_nan_in_any_loss_stops_the_learner_naming_that_loss(agent, name):
    config, spec, networks = _small(agent)
    builder = agent.AGENT.make_builder(config)
    parts = builder.learning_parts(networks=networks, environment_spec=spec, random_key=jax.random.PRNGKey(0))
    bad = _batch(spec, config.batch_size * config.num_sgd_steps_per_step, reward=np.nan)
    learner = SGDLearner(state=parts.state, update_step=parts.update_step, iterator=iter([bad]),
                         variables={}, num_sgd_steps_per_step=config.num_sgd_steps_per_step,
                         loss_keys=parts.loss_keys, name=f"{name} learner")
    learner.step()
    with pytest.raises(NonFiniteLossError, match=f"{name} learner: loss 'critic_loss' is nan"):
        learner.wait()
    for before, after in zip(jax.tree_util.tree_leaves(parts.state), jax.tree_util.tree_leaves(learner.state)):
        np.testing.assert_array_equal(before, after)


def test_learner_guards_every_listed_loss_not_only_the_first():
    def update(state, batch):
        return state + 1, {"a_loss": jnp.float32(1.0), "b_loss": batch[0]}, {}

    learner = SGDLearner(state=jnp.zeros(()), update_step=update, iterator=iter([jnp.array([np.inf])]), variables={},
                         loss_keys=("a_loss", "b_loss"))
    learner.step()
    with pytest.raises(NonFiniteLossError, match="loss 'b_loss' is inf"):
        learner.wait()
    assert float(learner.state) == 0.0
    with pytest.raises(ValueError, match="loss_keys"):
        SGDLearner(state=0, update_step=update, iterator=iter([]), variables={}, loss_keys="a_loss")


@pytest.mark.parametrize("agent, name", CONTINUOUS)
def test_config_errors_name_the_field(agent, name):
    config_class = agent.AGENT.config_class
    with pytest.raises(ValueError, match=rf"{config_class.__name__}.tau = 0.0; it must be in \(0, 1\]"):
        config_class(tau=0.0)
    with pytest.raises(ValueError, match=rf"{config_class.__name__}.critic_hidden_sizes"):
        dataclasses.replace(config_class(), critic_hidden_sizes=())


def test_d4pg_support_comes_from_the_config():
    with pytest.raises(ValueError, match=r"D4PGConfig.v_max = -5.0; it must be > v_min"):
        d4pg.D4PGConfig(v_min=0.0, v_max=-5.0)
    _, _, networks = _small(d4pg, num_atoms=7, v_min=-3.0, v_max=3.0)
    np.testing.assert_allclose(networks.support, [-3, -2, -1, 0, 1, 2, 3])


def test_critic_regression_loss_sums_the_critics_mean_squared_errors():
    q_tm1 = jnp.array([[1.0, 2.0], [0.0, 4.0]])
    target = jnp.array([2.0, 2.0])
    np.testing.assert_allclose(critic_regression_loss(q_tm1, target), 0.5 * (0.5 + 0.0) + 0.5 * (2.0 + 2.0))
    weighted = critic_regression_loss(q_tm1, target, importance_weights=jnp.array([0.0, 1.0]))
    np.testing.assert_allclose(weighted, 0.5 * (0.0 + 0.0) + 0.5 * (0.0 + 2.0))
