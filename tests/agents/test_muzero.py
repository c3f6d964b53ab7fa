"""MuZero: the categorical value transform, n-step targets and masks on hand-built sequences, the model's unroll, and
the search's policy as the adder stores it (one actor, batched actors, and through the builder's replay)."""

import dataclasses
import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from dm_env import specs
from fakes import FakeEnvironment, FakeVariableSource, RecordingAdder, continuous_spec

from acmelike.actors import make_policy_actor
from acmelike.actors import make_batched_step
from acmelike.losses.muzero import categorical_value_transform, unroll_targets
from acmelike.types import ReplaySample, SampleInfo, Step
from agents.muzero import MuZeroBuilder, MuZeroConfig, make_networks
from agents.muzero.acting import search_options, search_policy
from agents.muzero.learning import make_loss_fn, unroll_model

NUM_ACTIONS = 3
SPEC = continuous_spec(actions=specs.DiscreteArray(NUM_ACTIONS, dtype=np.int32), observation_size=3)  # any actions
CONFIG = MuZeroConfig(num_simulations=6, num_unroll_steps=3, n_step=2, embedding_size=8, hidden_sizes=(16,),
                      num_bins=21, max_value=8.0)


def _h(x, eps=1e-3):
    return np.sign(x) * (np.sqrt(np.abs(x) + 1) - 1) + eps * x


def _random_params(networks, seed=0):
    """Initial parameters with noise on every leaf: the zero-initialised heads would make every search trivial
    (uniform prior, all values 0)."""
    params = networks.init(jax.random.PRNGKey(seed))
    leaves, tree = jax.tree_util.tree_flatten(params)
    keys = jax.random.split(jax.random.PRNGKey(seed + 1), len(leaves))
    return jax.tree_util.tree_unflatten(tree, [x + 0.5 * jax.random.normal(k, x.shape) for x, k in zip(leaves, keys)])


# --- Value and reward transforms -------------------------------------------------------------------------------


def test_categorical_transform_inverts_and_rescales_like_the_paper():
    """The one transform of value and reward targets: h, then two-hot on the support; back by the mean and h^-1."""
    transform = categorical_value_transform(num_bins=41, max_value=20.0)
    apply, apply_inv = jax.jit(transform.apply), jax.jit(transform.apply_inv)
    x = np.array([-300.0, -41.5, -1.0, -0.25, 0.0, 0.3, 1.0, 7.0, 99.0, 400.0], np.float32)
    probs = np.asarray(apply(x))
    assert probs.shape == (len(x), 41)
    np.testing.assert_allclose(probs.sum(-1), 1.0, rtol=1e-5)
    assert np.all((probs > 1e-4).sum(-1) <= 2)  # two-hot: at most the two atoms around h(x)
    # The support's mean under the two-hot probabilities is h(x), and h^-1 of it is x again.
    support = np.linspace(-20.0, 20.0, 41)
    np.testing.assert_allclose(probs @ support, _h(x), atol=1e-3)
    np.testing.assert_allclose(apply_inv(probs), x, rtol=1e-3, atol=1e-3)
    # Beyond the support, h(x) is clipped to its last atom.
    wide = np.asarray(apply(np.array([1e6, -1e6], np.float32)))
    np.testing.assert_allclose(wide[:, [-1, 0]], np.eye(2), atol=1e-6)


def test_networks_predict_zero_and_a_uniform_policy_before_training():
    networks = make_networks(SPEC, CONFIG)

    @jax.jit
    def predictions(params, observations):
        embedding = networks.represent(params, observations)
        policy_logits, value_logits = networks.predict(params, embedding)
        _, reward_logits = networks.dynamics(params, embedding, jnp.array([0, 2]))
        return embedding, policy_logits, networks.to_scalar(value_logits), networks.to_scalar(reward_logits)

    embedding, policy_logits, value, reward = predictions(networks.init(jax.random.PRNGKey(0)), np.ones((2, 3)))
    np.testing.assert_allclose(value, 0.0, atol=1e-3)
    np.testing.assert_allclose(reward, 0.0, atol=1e-3)
    np.testing.assert_allclose(policy_logits, 0.0)
    assert float(embedding.min()) >= 0.0 and float(embedding.max()) <= 1.0  # min-max normalised hidden state


def test_make_networks_refuses_continuous_actions():
    with pytest.raises(ValueError, match="MuZero needs a discrete action space"):
        make_networks(continuous_spec(), CONFIG)


# --- Targets and masks -----------------------------------------------------------------------------------------

GAMMA = 0.9


def _targets(rewards, discounts, values, starts, k, n):
    return jax.jit(functools.partial(unroll_targets, num_unroll_steps=k, n_step=n))(rewards, discounts, values, starts)


def _reference_targets(rewards, discounts, values, starts, k, n):
    """z_t summed by hand: up to n rewards of row t's episode, then the value of the observation reached (the
    episode's last one if it ends sooner; 0 for the last row itself, which takes no action)."""
    length = len(rewards)
    acted = [not starts[t + 1] for t in range(length - 1)]
    z = []
    for t in range(k + 1):
        if not acted[t]:
            z.append(0.0)
            continue
        total, weight, j = 0.0, 1.0, t
        while j < t + n and acted[j]:
            total += weight * rewards[j]
            weight *= discounts[j]
            j += 1
        z.append(total + weight * values[j])
    return np.array(z)


def _hand_built_sequence(truncated: bool):
    """K = 4, n = 3, L = 8 rows: rows 0-2 act, row 3 is the episode's last observation (terminated after row 2's
    action, or truncated), row 4 starts the next episode."""
    rewards = np.array([1.0, 2.0, 3.0, 0.0, 10.0, 20.0, 30.0, 40.0], np.float32)
    discounts = np.full(8, GAMMA, np.float32)
    discounts[2] = GAMMA if truncated else 0.0
    discounts[3] = 0.0  # the last row holds zeros
    values = np.array([5.0, 6.0, 7.0, 8.0, 9.0, 11.0, 12.0, 13.0], np.float32)
    starts = np.array([False, False, False, False, True, False, False, False])
    return rewards, discounts, values, starts


@pytest.mark.parametrize("truncated", [False, True])
def test_targets_bootstrap_n_steps_ahead_and_stop_at_the_episode_end(truncated):
    rewards, discounts, values, starts = _hand_built_sequence(truncated)
    targets = _targets(rewards, discounts, values, starts, 4, 3)
    expected = _reference_targets(rewards, discounts, values, starts, k=4, n=3)
    np.testing.assert_allclose(targets.values[:4], expected[:4], rtol=1e-6)  # step 4: the next episode, below
    # By hand: row 0 sums three rewards and bootstraps from row 3 (the last observation: 0 after termination).
    tail = 0.0 if truncated is False else GAMMA**3 * 8.0
    np.testing.assert_allclose(targets.values[0], 1 + GAMMA * 2 + GAMMA**2 * 3 + tail, rtol=1e-6)
    np.testing.assert_allclose(targets.values[2], 3 + (GAMMA * 8.0 if truncated else 0.0), rtol=1e-6)
    # Steps 0-2 act in row 0's episode; step 3 is its last observation, step 4 the next episode's first. After a
    # termination both are the absorbing state (value and reward 0, whatever the next episode holds); after a
    # truncation nothing past the end is known.
    np.testing.assert_array_equal(targets.policy_mask, [1, 1, 1, 0, 0])
    if truncated:
        np.testing.assert_allclose(targets.rewards, rewards[:4])
        np.testing.assert_array_equal(targets.reward_mask, [1, 1, 1, 0])
        np.testing.assert_array_equal(targets.value_mask, [1, 1, 1, 0, 0])
    else:
        np.testing.assert_allclose(targets.values[3:], 0.0)
        np.testing.assert_allclose(targets.rewards, [1.0, 2.0, 3.0, 0.0])
        np.testing.assert_array_equal(targets.reward_mask, 1.0)
        np.testing.assert_array_equal(targets.value_mask, 1.0)


def test_the_unroll_stays_absorbing_past_a_termination_into_the_next_episode():
    """K = 4 from a row two steps before a termination: steps 2-4 are absorbing although the next episode, with
    rewards of 10 and more, starts in row 3."""
    rewards = np.array([1.0, 1.0, 0.0, 10.0, 20.0, 30.0, 40.0, 50.0], np.float32)
    discounts = np.array([GAMMA, 0.0, 0.0, GAMMA, GAMMA, GAMMA, GAMMA, GAMMA], np.float32)
    starts = np.array([False, False, False, True, False, False, False, False])
    targets = _targets(rewards, discounts, np.full(8, 7.0, np.float32), starts, 4, 3)
    np.testing.assert_allclose(targets.values, [1.0 + GAMMA, 1.0, 0.0, 0.0, 0.0], rtol=1e-6)
    np.testing.assert_allclose(targets.rewards, [1.0, 1.0, 0.0, 0.0])
    np.testing.assert_array_equal(targets.policy_mask, [1, 1, 0, 0, 0])
    np.testing.assert_array_equal(targets.value_mask, 1.0)
    np.testing.assert_array_equal(targets.reward_mask, 1.0)


def test_targets_inside_one_episode_are_plain_n_step_returns():
    rng = np.random.default_rng(0)
    rewards, values = rng.normal(size=9).astype(np.float32), rng.normal(size=9).astype(np.float32)
    discounts, starts = np.full(9, GAMMA, np.float32), np.zeros(9, bool)
    targets = _targets(rewards, discounts, values, starts, 4, 4)
    for k in range(5):
        expected = sum(GAMMA**i * rewards[k + i] for i in range(4)) + GAMMA**4 * values[k + 4]
        np.testing.assert_allclose(targets.values[k], expected, rtol=1e-5)
    np.testing.assert_array_equal(targets.policy_mask, 1.0)
    np.testing.assert_array_equal(targets.value_mask, 1.0)


def test_a_sequence_starting_at_an_episodes_last_observation_teaches_nothing():
    starts = np.array([False, True, False, False, False, False])
    targets = _targets(np.ones(6), np.full(6, GAMMA), np.ones(6), starts, 2, 3)
    np.testing.assert_array_equal(targets.policy_mask, 0.0)
    np.testing.assert_array_equal(targets.value_mask, 0.0)
    np.testing.assert_array_equal(targets.reward_mask, 0.0)


def test_unroll_targets_needs_k_plus_n_plus_one_rows():
    with pytest.raises(ValueError, match="cannot give 4 steps"):
        unroll_targets(np.ones(6), np.ones(6), np.ones(6), np.zeros(6, bool), num_unroll_steps=4, n_step=2)


# --- The model's unroll and the loss ----------------------------------------------------------------------------


def test_unroll_composes_representation_dynamics_and_prediction():
    networks = make_networks(SPEC, CONFIG)
    params = _random_params(networks)
    batch, k = 2, CONFIG.num_unroll_steps
    observations = np.random.default_rng(0).normal(size=(batch, 3)).astype(np.float32)
    actions = np.array([[0, 1, 2], [2, 2, 0]], np.int32)

    @jax.jit
    def by_hand(params):
        """Step k's predictions from k dynamics steps after the representation, one function call at a time."""
        embedding = networks.represent(params, observations)
        policy, value, reward = [], [], []
        for step in range(k + 1):
            policy_logits, value_logits = networks.predict(params, embedding)
            policy.append(policy_logits)
            value.append(value_logits)
            if step < k:
                embedding, reward_logits = networks.dynamics(params, embedding, actions[:, step])
                reward.append(reward_logits)
        return jnp.stack(policy, 1), jnp.stack(value, 1), jnp.stack(reward, 1)

    unroll = jax.jit(lambda params: unroll_model(networks, params, observations, actions))(params)
    assert unroll.policy_logits.shape == (batch, k + 1, NUM_ACTIONS)
    assert unroll.value_logits.shape == (batch, k + 1, CONFIG.num_bins)
    assert unroll.reward_logits.shape == (batch, k, CONFIG.num_bins)
    for got, wanted in zip(unroll, by_hand(params)):
        np.testing.assert_allclose(got, wanted, rtol=1e-5, atol=1e-5)


def _sample(config, seed=0, batch=2):
    """A [B, L] batch; sequence 1's episode ends at row 2 (row 3 starts the next one)."""
    rng = np.random.default_rng(seed)
    length = config.sequence_length
    starts = np.zeros((batch, length), bool)
    starts[1, 3] = True
    discounts = np.ones((batch, length), np.float32)
    discounts[1, 1:3] = 0.0  # terminated after row 1's action; row 2 (the last observation) holds zeros
    rewards = rng.normal(size=(batch, length)).astype(np.float32)
    rewards[1, 2] = 0.0
    weights = rng.uniform(size=(batch, length, NUM_ACTIONS)).astype(np.float32)
    data = Step(
        observation=rng.normal(size=(batch, length, 3)).astype(np.float32),
        action=rng.integers(0, NUM_ACTIONS, (batch, length)).astype(np.int32),
        reward=rewards,
        discount=discounts,
        start_of_episode=starts,
        extras={"action_weights": weights / weights.sum(-1, keepdims=True),
                "root_value": rng.normal(size=(batch, length)).astype(np.float32)},
    )
    info = SampleInfo(key=np.arange(batch, dtype=np.uint64), probability=np.full(batch, 0.5),
                      table_size=np.full(batch, 2))
    return ReplaySample(info=info, data=data)


@pytest.mark.parametrize("bootstrap", ["target_network", "search"])
def test_the_loss_ignores_everything_past_an_episodes_end(bootstrap):
    """Sequence 1's episode ends at row 2: its later actions, rewards, policies and values change neither its loss
    nor its priority, while sequence 0's change its loss."""
    config = dataclasses.replace(CONFIG, value_bootstrap=bootstrap)
    networks = make_networks(SPEC, config)
    params = _random_params(networks)
    loss_fn = jax.jit(make_loss_fn(networks, config))
    sample = _sample(config)

    def changed_after_row_2(sequence):
        def change(x):
            x = np.array(x)
            x[sequence, 3:] = (x[sequence, 3:] + 1) % NUM_ACTIONS if x.dtype == np.int32 else x[sequence, 3:] * 2 + 1
            return x

        data = sample.data
        return sample._replace(data=data._replace(
            observation=change(data.observation), action=change(data.action), reward=change(data.reward),
            extras=jax.tree_util.tree_map(change, data.extras)))

    loss, (priorities, _) = loss_fn(params, params, sample)
    loss_1, (priorities_1, _) = loss_fn(params, params, changed_after_row_2(1))
    loss_0, _ = loss_fn(params, params, changed_after_row_2(0))
    np.testing.assert_allclose(loss_1, loss, rtol=1e-6)
    np.testing.assert_allclose(priorities_1, priorities, rtol=1e-6)
    assert not np.isclose(loss_0, loss)


def test_priorities_are_the_first_steps_value_error_in_the_rescaled_space():
    networks = make_networks(SPEC, CONFIG)
    params = _random_params(networks)
    sample = _sample(CONFIG)
    data = sample.data

    @jax.jit
    def by_hand(params):
        """v_0 from the unroll and z_0 from the unroll targets, bootstrapped from the (target) network's values."""
        unroll = unroll_model(networks, params, data.observation[:, 0], data.action[:, :CONFIG.num_unroll_steps])
        _, value_logits = networks.predict(params, networks.represent(params, data.observation.reshape(-1, 3)))
        bootstrap = networks.to_scalar(value_logits).reshape(data.reward.shape)
        z_0 = jnp.stack([unroll_targets(
            data.reward[b], CONFIG.discount * data.discount[b], bootstrap[b], data.start_of_episode[b],
            num_unroll_steps=CONFIG.num_unroll_steps, n_step=CONFIG.n_step).values[0] for b in range(2)])
        return networks.to_scalar(unroll.value_logits[:, 0]), z_0

    _, (priorities, metrics) = jax.jit(make_loss_fn(networks, CONFIG))(params, params, sample)
    value_0, z_0 = by_hand(params)
    np.testing.assert_allclose(priorities, np.abs(_h(value_0) - _h(z_0)), rtol=1e-4, atol=1e-5)
    assert all(np.isfinite(float(v)) for v in metrics.values())


def test_an_update_lowers_the_loss_on_a_fixed_batch():
    from agents.muzero.learning import init_training_state, make_update_step

    networks = make_networks(SPEC, CONFIG)
    update = jax.jit(make_update_step(networks, CONFIG))
    state = init_training_state(networks, CONFIG, jax.random.PRNGKey(0))
    sample = _sample(CONFIG)
    first = None
    for _ in range(50):
        state, metrics, extras = update(state, sample)
        first = float(metrics["loss"]) if first is None else first
    assert float(metrics["loss"]) < 0.9 * first
    assert extras["priorities"].shape == (2,)


@pytest.mark.parametrize("search", ["gumbel", "puct"])
def test_reanalyse_gives_the_first_sequences_the_policy_of_a_fresh_search(search):
    """reanalyse_fraction 0.5 of a batch of 2: sequence 0's targets at steps 0 .. K become the search's from its
    stored observations with the given parameters; its later rows and all of sequence 1 keep the stored ones."""
    from agents.muzero.learning import make_reanalyse

    config = dataclasses.replace(CONFIG, search=search, batch_size=2, reanalyse_fraction=0.5)
    networks = make_networks(SPEC, config)
    params, key, sample = _random_params(networks), jax.random.PRNGKey(3), _sample(config)
    k = config.num_unroll_steps
    reanalysed, metrics = jax.jit(make_reanalyse(networks, config))(params, key, sample)
    fresh = search_policy(networks, params, key, sample.data.observation[0, : k + 1], **search_options(config))
    got, stored = reanalysed.data.extras["action_weights"], sample.data.extras["action_weights"]
    np.testing.assert_allclose(got[0, : k + 1], fresh.action_weights, rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(got[0, k + 1:], stored[0, k + 1:])
    np.testing.assert_array_equal(got[1], stored[1])
    np.testing.assert_allclose(metrics["reanalyse_target_shift"],
                               0.5 * np.abs(fresh.action_weights - stored[0, : k + 1]).sum(-1).mean(), rtol=1e-5)
    assert not np.allclose(got[0, : k + 1], stored[0, : k + 1])
    # Off by default: the sample passes through.
    unchanged, no_metrics = make_reanalyse(networks, CONFIG)(params, key, sample)
    assert unchanged is sample and no_metrics == {}


def test_an_update_with_reanalyse_trains_on_the_fresh_targets():
    from agents.muzero.learning import init_training_state, make_update_step

    config = dataclasses.replace(CONFIG, batch_size=2, reanalyse_fraction=1.0)
    networks = make_networks(SPEC, config)
    state = init_training_state(networks, config, jax.random.PRNGKey(0))
    plain = init_training_state(networks, CONFIG, jax.random.PRNGKey(0))
    same = jax.tree_util.tree_map(np.array_equal, state.params, plain.params)
    assert all(jax.tree_util.tree_leaves(same))  # the key leaves the parameters' initialisation alone
    params = _random_params(networks)  # the initial heads predict a uniform policy: every target's CE is log A
    state, plain = (s._replace(params=params, target_params=params) for s in (state, plain))
    sample = _sample(config)
    _, metrics, _ = jax.jit(make_update_step(networks, config))(state, sample)
    _, plain_metrics, _ = jax.jit(make_update_step(networks, CONFIG))(plain, sample)
    assert "reanalyse_target_shift" in metrics and "reanalyse_target_shift" not in plain_metrics
    assert not np.isclose(metrics["policy_loss"], plain_metrics["policy_loss"])
    np.testing.assert_allclose(metrics["value_loss"], plain_metrics["value_loss"], rtol=1e-6)


# --- The search in the actor ------------------------------------------------------------------------------------


def _jitted_search(networks, config, evaluation):
    """`(params, key, observation) -> PolicyOutput` of one observation's search, jitted."""
    options = search_options(config, evaluation=evaluation)
    return jax.jit(lambda params, key, observation: search_policy(networks, params, key, observation[None], **options))


@pytest.mark.parametrize("search", ["gumbel", "puct"])
def test_the_adder_stores_the_policy_and_value_of_the_search_that_chose_each_action(search):
    config = dataclasses.replace(CONFIG, search=search)
    networks = make_networks(SPEC, config)
    params = _random_params(networks)
    builder = MuZeroBuilder(config)
    policy = builder.make_policy(networks=networks, environment_spec=SPEC)
    adder = RecordingAdder()
    actor = make_policy_actor(policy, random_key=jax.random.PRNGKey(7), variable_source=FakeVariableSource(params),
                              adder=adder, variable_update_period=1)
    environment = FakeEnvironment(episode_length=4, num_actions=NUM_ACTIONS, observation_shape=(3,))
    timestep = environment.reset()
    actor.observe_first(timestep)
    while not timestep.last():
        action = actor.select_action(timestep.observation)
        timestep = environment.step(action)
        actor.observe(action, timestep)
    # The same searches, from the same observations and the actor's chain of keys.
    search = _jitted_search(networks, config, evaluation=False)
    key = jax.random.PRNGKey(7)
    for t, (_, action, _, extras) in enumerate(call for call in adder.calls if call[0] == "add"):
        key, search_key = jax.random.split(key)
        output = search(params, search_key, np.full(3, t, np.float32))
        assert int(action) == int(output.action[0])
        np.testing.assert_allclose(extras["action_weights"], output.action_weights[0], rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(extras["root_value"], output.search_tree.summary().value[0], rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(np.sum(extras["action_weights"]), 1.0, rtol=1e-5)


def test_puct_search_targets_its_visit_distribution_and_evaluates_with_the_most_visited_action():
    config = dataclasses.replace(CONFIG, search="puct", num_simulations=24)
    networks = make_networks(SPEC, config)
    params = _random_params(networks)
    observation = np.full(3, 0.5, np.float32)
    for evaluation in (False, True):
        output = _jitted_search(networks, config, evaluation)(params, jax.random.PRNGKey(2), observation)
        visits = np.asarray(output.search_tree.summary().visit_counts[0], np.float64)
        assert visits.sum() == config.num_simulations
        np.testing.assert_allclose(output.action_weights[0], visits / visits.sum(), rtol=1e-6)
        if evaluation:
            assert int(output.action[0]) == int(np.argmax(visits))


def test_batched_actors_run_one_search_per_environment():
    """`--num-envs`: the vmapped core searches each environment's observation with its own key, as one actor would."""
    networks = make_networks(SPEC, CONFIG)
    params = _random_params(networks)
    policy = MuZeroBuilder(CONFIG).make_policy(networks=networks, environment_spec=SPEC)
    keys = jax.random.split(jax.random.PRNGKey(3), 4)
    observations = np.random.default_rng(1).normal(size=(4, 3)).astype(np.float32)
    state = jax.vmap(policy.init)(keys)
    actions, _, extras = jax.jit(make_batched_step(policy))(params, observations, state, np.ones(4, bool),
                                                            np.zeros(4, bool))
    select_action = jax.jit(policy.select_action)
    for i in range(4):
        action, single = select_action(params, observations[i], policy.init(keys[i]))
        assert int(actions[i]) == int(action)
        np.testing.assert_allclose(extras["action_weights"][i], single.action_weights, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(extras["root_value"][i], single.root_value, rtol=1e-5, atol=1e-6)


def test_replay_serves_the_search_policy_of_each_stored_step():
    """Through the builder's table, adder and dataset (seeded local replay): every sampled step that took an action
    carries the policy and value of the search at its observation (without Gumbel noise: deterministic)."""
    from acmelike import replay
    from acmelike.replay.local import LocalReplay

    config = dataclasses.replace(CONFIG, gumbel_scale=0.0, min_replay_size=1, batch_size=4)
    networks = make_networks(SPEC, config)
    params = _random_params(networks)
    builder = MuZeroBuilder(config)
    policy = builder.make_policy(networks=networks, environment_spec=SPEC)
    tables = replay.never_blocking_inserts(builder.make_replay_tables(environment_spec=SPEC, policy=policy))
    client = LocalReplay(tables, seed=0)
    adder = builder.make_adder(replay_client=client, environment_spec=SPEC, policy=policy)
    actor = builder.make_actor(random_key=jax.random.PRNGKey(0), policy=policy, environment_spec=SPEC,
                               variable_source=FakeVariableSource(params), adder=adder)
    environment = FakeEnvironment(episode_length=5, num_actions=NUM_ACTIONS, observation_shape=(3,))
    for _ in range(3):
        timestep = environment.reset()
        actor.observe_first(timestep)
        while not timestep.last():
            action = actor.select_action(timestep.observation)
            timestep = environment.step(action)
            actor.observe(action, timestep)
    adder.close()
    search = _jitted_search(networks, config, evaluation=True)
    by_time = {t: search(params, jax.random.PRNGKey(0), np.full(3, t, np.float32)) for t in range(5)}
    batch = next(builder.make_dataset_iterator(replay_client=client)).data
    assert batch.observation.shape[:2] == (4, config.sequence_length)
    checked = 0
    for b in range(4):
        for row in range(config.sequence_length - 1):
            if batch.start_of_episode[b, row + 1]:
                continue  # the episode's last observation: no search chose an action there
            output = by_time[int(batch.observation[b, row, 0])]
            np.testing.assert_allclose(batch.extras["action_weights"][b, row], output.action_weights[0], atol=1e-6)
            np.testing.assert_allclose(batch.extras["root_value"][b, row], output.search_tree.summary().value[0],
                                       rtol=1e-5, atol=1e-6)
            checked += 1
    assert checked > 0


def test_config_names_the_field_it_refuses():
    with pytest.raises(ValueError, match="MuZeroConfig.value_bootstrap"):
        MuZeroConfig(value_bootstrap="reanalyse")
    with pytest.raises(ValueError, match="MuZeroConfig.num_bins"):
        MuZeroConfig(num_bins=20)
    with pytest.raises(ValueError, match=r"MuZeroConfig.search = 'mcts'; it must be one of \('gumbel', 'puct'\)"):
        MuZeroConfig(search="mcts")
    with pytest.raises(ValueError, match="MuZeroConfig.dirichlet_fraction"):
        MuZeroConfig(dirichlet_fraction=1.5)
