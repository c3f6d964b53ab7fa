"""Recurrent networks and actor cores: unroll with resets, the stored state, torsos against specs."""

import dm_env
import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from dm_env import specs
from fakes import discrete_spec

from acmelike.actors import GenericActor, apex_epsilons, recurrent_categorical_core, recurrent_epsilon_greedy_core
from acmelike.networks import MLP, ImpalaResNetTorso, NatureDQNTorso, make_torso_lstm_network


class _LogitsValue(nn.Module):
    @nn.compact
    def __call__(self, x):
        return nn.Dense(2)(x), nn.Dense(1)(x)[..., 0]


def _network(observation_size=3, num_outputs=2, hidden=8):
    return make_torso_lstm_network(MLP((8,), activate_final=True), hidden, MLP((num_outputs,)), (observation_size,))


def test_unroll_with_an_episode_start_equals_stepping_with_a_reset():
    network = _network()
    params = network.init(jax.random.PRNGKey(0))
    time, batch = 7, 2
    observations = jax.random.normal(jax.random.PRNGKey(1), (time, batch, 3))
    starts = np.zeros((time, batch), bool)
    starts[4, 0] = True  # an episode starts mid-sequence in batch row 0 only
    # A non-initial state before the sequence, as stored in replay.
    state = jax.tree_util.tree_map(lambda x: x + 0.5, network.initial_state(batch))

    unrolled, final = network.unroll(params, observations, state, starts)

    apply = jax.jit(network.apply)
    stepped, step_state = [], state
    for t in range(time):
        step_state = jax.tree_util.tree_map(
            lambda s, fresh: jnp.where(starts[t][:, None], fresh, s), step_state, network.initial_state(batch)
        )
        outputs, step_state = apply(params, observations[t], step_state)
        stepped.append(outputs)
    np.testing.assert_allclose(unrolled, np.stack(stepped), atol=1e-5)
    for a, b in zip(jax.tree_util.tree_leaves(final), jax.tree_util.tree_leaves(step_state)):
        np.testing.assert_allclose(a, b, atol=1e-5)
    # The reset matters: without it row 0 differs after the start, and row 1 is unaffected.
    no_reset, _ = network.unroll(params, observations, state, np.zeros_like(starts))
    assert np.abs(no_reset[4:, 0] - unrolled[4:, 0]).max() > 1e-4
    np.testing.assert_allclose(no_reset[:, 1], unrolled[:, 1], atol=1e-6)


def test_image_torsos_output_shapes():
    # Atari's 84x84x4 frames, traced only (jax.eval_shape): run op by op, the ResNet's init and apply took 45 s of
    # a test run, and a jitted init of the Nature torso 13 s. The ResNet runs for real in
    # test_minatar_frames_fit_the_resnet_torso, the Nature torso in benchmarks/learner_throughput.py.
    for torso, size in ((NatureDQNTorso(), 512), (ImpalaResNetTorso(), 256)):
        frames = jax.ShapeDtypeStruct((2, 84, 84, 4), jnp.uint8)
        params = jax.eval_shape(torso.init, jax.random.PRNGKey(0), frames)
        assert jax.eval_shape(torso.apply, params, frames).shape == (2, size)


class _Params:
    """A variable client serving fixed parameters."""

    def __init__(self, params):
        self.params = params

    def update(self, wait=False):
        pass


class _RecordingAdder:
    def __init__(self):
        self.steps = []  # (observation the action was chosen from, extras)
        self._observation = None

    def add_first(self, timestep):
        self._observation = timestep.observation

    def add(self, action, next_timestep, extras=()):
        self.steps.append((self._observation, extras))
        self._observation = next_timestep.observation


def test_actor_stores_the_state_that_chose_each_action_and_resets_at_episode_start():
    network = _network(num_outputs=3)
    params = network.init(jax.random.PRNGKey(0))
    core = recurrent_epsilon_greedy_core(network, [0.0])
    adder = _RecordingAdder()
    actor = GenericActor(core, jax.random.PRNGKey(1), _Params(params), adder)
    rng = np.random.default_rng(0)
    episodes = [rng.normal(size=(4, 3)).astype(np.float32) for _ in range(2)]
    for episode in episodes:
        actor.observe_first(dm_env.restart(episode[0]))
        for t in range(1, len(episode)):
            action = actor.select_action(episode[t - 1])
            actor.observe(action, dm_env.transition(1.0, episode[t]))

    expected = []
    for episode in episodes:
        state = network.initial_state(1)  # reset at every episode start
        for t in range(len(episode) - 1):
            expected.append(state)
            _, state = network.apply(params, episode[t][None], state)
    assert len(adder.steps) == len(expected) == 6
    for (observation, extras), state in zip(adder.steps, expected):
        for stored, wanted in zip(jax.tree_util.tree_leaves(extras["core_state"]), jax.tree_util.tree_leaves(state)):
            np.testing.assert_allclose(stored, np.asarray(wanted)[0], atol=1e-6)
    # Within an episode the state moves on (so the check above could fail).
    assert not np.allclose(adder.steps[1][1]["core_state"].hidden, adder.steps[0][1]["core_state"].hidden)


def test_categorical_core_reports_the_behaviour_logits():
    network = make_torso_lstm_network(MLP((8,), activate_final=True), 8, _LogitsValue(), (3,))
    params = network.init(jax.random.PRNGKey(0))
    core = recurrent_categorical_core(network, num_actions=2)
    state = core.on_episode_start(core.init(jax.random.PRNGKey(1)))
    assert core.get_extras(state)["logits"].shape == (2,)  # the signature before the first action
    observation = jnp.ones((3,))
    _, after = core.select_action(params, observation, state)
    (logits, _), _ = network.apply(params, observation[None], network.initial_state(1))
    np.testing.assert_allclose(core.get_extras(after)["logits"], logits[0], atol=1e-6)


def test_each_actor_draws_its_own_epsilon_from_the_apex_set():
    epsilons = np.asarray(apex_epsilons(8, 0.4, 7.0))
    np.testing.assert_allclose(epsilons[[0, -1]], [0.4, 0.4**8], rtol=1e-5)
    core = recurrent_epsilon_greedy_core(_network(), epsilons)
    drawn = {float(core.init(jax.random.PRNGKey(seed)).policy_state) for seed in range(20)}
    assert len(drawn) > 3 and drawn <= {float(e) for e in epsilons}


@pytest.mark.parametrize("agent", ["r2d2", "impala"])
def test_conv_torso_on_a_flat_vector_is_refused_naming_both(agent):
    import importlib

    package = importlib.import_module(f"agents.{agent}")
    config = package.AGENT.config_class(torso="nature_dqn")
    with pytest.raises(ValueError) as error:
        package.make_networks(discrete_spec(specs.Array((4,), np.float32, name="observation")), config)
    message = str(error.value)
    assert agent.upper() in message.upper() and "nature_dqn" in message and "(4,)" in message
    # Too small images are refused as well; the ResNet torso takes them.
    small = discrete_spec(specs.Array((10, 10, 4), np.uint8, name="observation"))
    with pytest.raises(ValueError, match="36x36"):
        package.make_networks(small, config)
    package.make_networks(small, package.AGENT.config_class(torso="impala_resnet"))
    with pytest.raises(ValueError, match="mlp"):
        package.make_networks(small, package.AGENT.config_class(torso="mlp"))
