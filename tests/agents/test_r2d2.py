"""R2D2's loss (n-step double Q with value rescaling), burn-in, sequence priorities."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from acmelike.losses import sequence_priority, transformed_n_step_double_q_loss
from acmelike.specs import EnvironmentSpec
from acmelike.types import ReplaySample, SampleInfo, Step


def _h(x, eps=1e-3):
    return np.sign(x) * (np.sqrt(np.abs(x) + 1) - 1) + eps * x


def _h_inverse(x, eps=1e-3):
    return np.sign(x) * (((np.sqrt(1 + 4 * eps * (np.abs(x) + 1 + eps)) - 1) / (2 * eps)) ** 2 - 1)


def test_transformed_n_step_double_q_matches_a_reference():
    rng = np.random.default_rng(0)
    steps, actions, n = 6, 3, 3
    q_online = rng.normal(size=(steps + 1, actions)).astype(np.float32) * 3
    q_target = rng.normal(size=(steps + 1, actions)).astype(np.float32) * 3
    a = rng.integers(0, actions, steps)
    r = rng.normal(size=steps).astype(np.float32) * 5
    d = np.full(steps, 0.9, np.float32)
    d[1] = 0.0  # a termination
    continues = np.ones(steps, np.float32)
    continues[3] = 0.0  # step 4 is padding: step 3 bootstraps from the value after it
    mask = np.ones(steps, np.float32)
    mask[4] = 0.0
    out = transformed_n_step_double_q_loss(
        q_online, q_target, a, r, d, continues, mask, n_step=n
    )
    bootstrap = _h_inverse(q_target[np.arange(1, steps + 1), np.argmax(q_online[1:], axis=1)])
    expected = np.zeros(steps)
    for t in range(steps):
        total, weight = 0.0, 1.0
        for k in range(t, min(t + n, steps)):
            total += weight * r[k]
            weight *= d[k]
            if k == min(t + n, steps) - 1 or continues[k] == 0:
                total += weight * bootstrap[k]
                break
        expected[t] = (_h(total) - q_online[t, a[t]]) * mask[t]
    np.testing.assert_allclose(out.td_error, expected, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(out.loss, 0.5 * np.sum(expected**2) / mask.sum(), rtol=1e-4)


def test_sequence_priority_mixes_max_and_mean():
    td = np.array([[1.0, -3.0, 2.0, 100.0]])
    mask = np.array([[1.0, 1.0, 1.0, 0.0]])
    np.testing.assert_allclose(sequence_priority(td, mask, eta=0.9), [0.9 * 3.0 + 0.1 * 2.0], rtol=1e-6)


def _sample(config, spec_size=3, batch=2, seed=0):
    rng = np.random.default_rng(seed)
    length = config.sequence_length
    starts = np.zeros((batch, length), bool)
    starts[1, config.burn_in_length + 3] = True  # an episode starts inside row 1's trace
    hidden = config.lstm_size
    core_state = rng.normal(size=(batch, length, hidden)).astype(np.float32)
    data = Step(
        observation=rng.normal(size=(batch, length, spec_size)).astype(np.float32),
        action=rng.integers(0, 2, (batch, length)).astype(np.int32),
        reward=rng.normal(size=(batch, length)).astype(np.float32),
        discount=np.ones((batch, length), np.float32),
        start_of_episode=starts,
        extras={"core_state": (core_state, core_state[..., ::-1].copy())},
    )
    info = SampleInfo(key=np.arange(batch, dtype=np.uint64), probability=np.full(batch, 0.5), table_size=np.full(batch, 2))
    return ReplaySample(info=info, data=data)


def test_burn_in_steps_get_no_gradient():
    from dm_env import specs

    from agents.r2d2 import R2D2Config, make_networks
    from agents.r2d2.learning import make_loss_fn

    config = R2D2Config(burn_in_length=3, trace_length=5, n_step=2, hidden_sizes=(8,), lstm_size=8)
    spec = EnvironmentSpec(
        observations=specs.Array((3,), np.float32),
        actions=specs.DiscreteArray(2, dtype=np.int32),
        rewards=specs.Array((), np.float32),
        discounts=specs.BoundedArray((), np.float32, 0.0, 1.0),
    )
    networks = make_networks(spec, config)
    params = networks.network.init(jax.random.PRNGKey(0))
    loss_fn = make_loss_fn(networks, config)
    sample = _sample(config)

    @jax.jit  # op by op, the unrolls and their gradient took 20-50 s
    def loss_of(observations, core_state):
        data = sample.data._replace(observation=observations, extras={"core_state": core_state})
        return loss_fn(params, params, sample._replace(data=data))[0]

    grad_obs, grad_state = jax.jit(jax.grad(loss_of, argnums=(0, 1)))(
        jnp.asarray(sample.data.observation), jax.tree_util.tree_map(jnp.asarray, sample.data.extras["core_state"])
    )
    burn_in = config.burn_in_length
    np.testing.assert_array_equal(grad_obs[:, :burn_in], 0.0)
    assert all(np.all(np.asarray(g) == 0.0) for g in jax.tree_util.tree_leaves(grad_state))
    assert np.abs(grad_obs[:, burn_in:]).max() > 1e-6  # the trace does get gradients
    # The burn-in still shapes the state the trace starts from.
    changed = np.array(sample.data.observation)
    changed[:, :burn_in] += 1.0
    assert not np.isclose(loss_of(changed, sample.data.extras["core_state"]),
                          loss_of(sample.data.observation, sample.data.extras["core_state"]))


@pytest.mark.classic
def test_replay_stores_the_state_that_chose_each_sequences_first_action():
    """Through the builder's real table and adder: every sampled sequence's first `core_state` is the LSTM state
    the actor had when it chose that step's action (stepped from its episode's start), zeros on padding steps."""
    from stack import require

    reverb = require("reverb")
    from fakes import FakeEnvironment

    from acmelike import replay
    from acmelike.replay.reverb_tables import to_reverb_table
    from acmelike.specs import make_environment_spec
    from agents.r2d2 import R2D2Builder, R2D2Config, make_networks

    config = R2D2Config(burn_in_length=1, trace_length=2, sequence_period=2, hidden_sizes=(8,), lstm_size=8,
                        min_replay_size=1, batch_size=1, num_epsilons=1, epsilon=0.5)
    environment = FakeEnvironment(episode_length=5, num_actions=2, observation_shape=(3,))
    spec = make_environment_spec(environment)
    networks = make_networks(spec, config)
    params = networks.network.init(jax.random.PRNGKey(0))
    builder = R2D2Builder(config)
    policy = builder.make_policy(networks=networks, environment_spec=spec)
    tables = replay.never_blocking_inserts(builder.make_replay_tables(environment_spec=spec, policy=policy))
    server = reverb.Server([to_reverb_table(table) for table in tables], port=None)
    try:
        client = reverb.Client(f"localhost:{server.port}")
        adder = builder.make_adder(replay_client=client, environment_spec=spec, policy=policy)

        class Source:
            def get_variables(self, names):
                return [params for _ in names]

        actor = builder.make_actor(random_key=jax.random.PRNGKey(1), policy=policy, environment_spec=spec,
                                   variable_source=Source(), adder=adder)
        for _ in range(3):
            timestep = environment.reset()
            actor.observe_first(timestep)
            while not timestep.last():
                action = actor.select_action(timestep.observation)
                timestep = environment.step(action)
                actor.observe(action, timestep)
        adder.close()
        size = client.server_info()[config.replay_table_name].current_size
        assert size >= 6
        dataset = builder.make_dataset_iterator(replay_client=client)
        checked = 0
        for _ in range(3 * size):
            step = jax.tree_util.tree_map(lambda x: np.asarray(x)[0], next(dataset).data)
            stored = step.extras["core_state"]
            t0 = int(step.observation[0, 0])  # FakeEnvironment's observations count the steps of an episode
            padding = bool(step.start_of_episode[1]) if len(step.start_of_episode) > 1 else False
            if padding:  # the row after an episode's last observation carries zeros
                assert all(np.all(np.asarray(s)[0] == 0) for s in stored)
                continue
            state = networks.network.initial_state(1)
            for t in range(t0):
                _, state = networks.network.apply(params, np.full((1, 3), t, np.float32), state)
            for got, wanted in zip(stored, state):
                np.testing.assert_allclose(np.asarray(got)[0], np.asarray(wanted)[0], atol=1e-5)
            checked += t0 > 0  # a non-trivial state: the sequence starts inside an episode
        assert checked > 0
    finally:
        server.stop()
