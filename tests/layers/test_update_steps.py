"""DQN's and PPO's pure update steps against hand-computed values."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from dm_env import specs

from acmelike.specs import EnvironmentSpec
from acmelike.types import ReplaySample, SampleInfo, Step, Transition
from agents import dqn, ppo
from agents.dqn import learning as dqn_learning
from agents.ppo import learning as ppo_learning


def _spec(num_actions=2, observation_size=3):
    return EnvironmentSpec(
        observations=specs.Array((observation_size,), np.float32, "observation"),
        actions=specs.DiscreteArray(num_actions, dtype=np.int32, name="action"),
        rewards=specs.Array((), np.float32),
        discounts=specs.BoundedArray((), np.float32, 0.0, 1.0),
    )


def _transitions(batch, rng):
    data = Transition(
        observation=rng.normal(size=(batch, 3)).astype(np.float32),
        action=rng.integers(0, 2, size=(batch,)).astype(np.int32),
        reward=rng.normal(size=(batch,)).astype(np.float32),
        discount=np.full((batch,), 0.99, np.float32),
        next_observation=rng.normal(size=(batch, 3)).astype(np.float32),
    )
    info = SampleInfo(key=np.arange(batch, dtype=np.uint64), probability=np.full(batch, 0.1), table_size=np.full(batch, 10))
    return ReplaySample(info=info, data=data)


def test_dqn_copies_the_target_network_every_period_and_returns_one_priority_per_item():
    config = dqn.DQNConfig(batch_size=8, target_update_period=3, hidden_sizes=(8,))
    networks = dqn.make_networks(_spec(), config)
    state = dqn_learning.init_training_state(networks, config, jax.random.PRNGKey(0))
    update = jax.jit(dqn_learning.make_update_step(networks, config))
    rng = np.random.default_rng(0)
    leaves = lambda tree: np.concatenate([np.ravel(x) for x in jax.tree_util.tree_leaves(tree)])  # noqa: E731
    last_copy = leaves(state.target_params)  # the target network starts as a copy of the online one
    for step in range(1, 7):
        sample = _transitions(8, rng)
        state, metrics, extras = update(state, sample)
        assert extras["priorities"].shape == (8,) and bool(jnp.all(extras["priorities"] >= 0))
        target, online = leaves(state.target_params), leaves(state.params)
        if step % 3 == 0:  # copied at SGD steps 3 and 6 exactly
            np.testing.assert_array_equal(target, online)
            last_copy = target
        else:  # in between, the target holds the last copy while the online network moves
            assert not np.array_equal(target, online)
            np.testing.assert_array_equal(target, last_copy)
    assert int(state.steps) == 6


def test_dqn_priorities_are_the_absolute_td_errors():
    config = dqn.DQNConfig(batch_size=4, hidden_sizes=(8,), n_step=1)
    networks = dqn.make_networks(_spec(), config)
    state = dqn_learning.init_training_state(networks, config, jax.random.PRNGKey(1))
    sample = _transitions(4, np.random.default_rng(1))
    _, _, extras = dqn_learning.make_update_step(networks, config)(state, sample)
    apply, data = networks.q_network.apply, sample.data
    q = apply(state.params, data.observation)[np.arange(4), data.action]
    next_online, next_target = apply(state.params, data.next_observation), apply(state.target_params, data.next_observation)
    target = data.reward + data.discount * next_target[np.arange(4), np.argmax(next_online, axis=-1)]
    np.testing.assert_allclose(extras["priorities"], np.abs(target - q), rtol=1e-5, atol=1e-6)


def test_dqn_rmsprop_is_the_minatar_papers_centered_rmsprop():
    """optimizer="rmsprop" takes the steps of PyTorch's RMSprop(alpha=0.95, eps=0.01, momentum=0.95,
    centered=True), written out by hand: eps after the square root, momentum on the normalised gradient."""
    config = dqn.DQNConfig(optimizer="rmsprop", learning_rate=2.5e-4, max_gradient_norm=1e6)
    optimizer = dqn_learning.make_optimizer(config)
    params = {"w": jnp.zeros(3)}
    state = optimizer.init(params)
    square_avg, grad_avg, buf = np.zeros(3), np.zeros(3), np.zeros(3)
    for grads in ([1e-3, -2.0, 0.5], [2e-3, 1.0, 0.5], [-1e-3, -3.0, 0.0]):
        grads = np.asarray(grads)
        square_avg = 0.95 * square_avg + 0.05 * grads**2
        grad_avg = 0.95 * grad_avg + 0.05 * grads
        buf = 0.95 * buf + grads / (np.sqrt(square_avg - grad_avg**2) + 0.01)
        updates, state = optimizer.update({"w": jnp.asarray(grads, jnp.float32)}, state, params)
        np.testing.assert_allclose(updates["w"], -2.5e-4 * buf, rtol=1e-4)
    # Where gradients are tiny, eps = 0.01 keeps the step far below Adam's, which normalises them to ~lr.
    adam = dqn_learning.make_optimizer(dqn.DQNConfig(learning_rate=2.5e-4))
    adam_updates, _ = adam.update({"w": jnp.full(3, 1e-4)}, adam.init(params), params)
    rms_updates, _ = optimizer.update({"w": jnp.full(3, 1e-4)}, optimizer.init(params), params)
    assert float(jnp.abs(rms_updates["w"]).max()) < 0.01 * float(jnp.abs(adam_updates["w"]).max())


def test_dqn_dueling_head_is_a_state_value_plus_mean_centred_advantages():
    config = dqn.DQNConfig(dueling=True, hidden_sizes=(8,))
    networks = dqn.make_networks(_spec(num_actions=4), config)
    params = networks.q_network.init(jax.random.PRNGKey(0))
    head = params["params"]["layers_1"]
    assert set(head) == {"value", "advantages"}
    observations = np.random.default_rng(0).normal(size=(5, 3)).astype(np.float32)
    q = networks.q_network.apply(params, observations)
    # Recompute by hand from the torso's features and the two linear layers.
    features = jax.nn.relu(observations @ params["params"]["layers_0"]["Dense_0"]["kernel"]
                           + params["params"]["layers_0"]["Dense_0"]["bias"])
    value = features @ head["value"]["kernel"] + head["value"]["bias"]
    advantages = features @ head["advantages"]["kernel"] + head["advantages"]["bias"]
    np.testing.assert_allclose(q, value + advantages - advantages.mean(-1, keepdims=True), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(q.mean(-1), value[:, 0], rtol=1e-5, atol=1e-6)
    # Without the flag the network keeps its single linear layer (and its checkpoints' parameter names).
    plain = dqn.make_networks(_spec(num_actions=4), dqn.DQNConfig(hidden_sizes=(8,))).q_network.init(jax.random.PRNGKey(0))
    assert set(plain["params"]) == {"Dense_0", "Dense_1"}


def test_dqn_rejects_an_unknown_optimizer_by_name():
    with pytest.raises(ValueError, match=r"DQNConfig.optimizer = 'sgd'; it must be one of \('adam', 'rmsprop'\)"):
        dqn.DQNConfig(optimizer="sgd")


def test_ppo_masks_the_padding_step_of_a_continue_sequence():
    # A [1, T + 1] CONTINUE sequence in which an episode ends at step 2 and the next starts at step 3: step 2 is the
    # padding step (the final observation, with no action of its own) and must carry no gradient.
    config = ppo.PPOConfig(unroll_length=4, batch_size=1, num_minibatches=1, num_epochs=1, hidden_sizes=(8,),
                           max_queue_size=1)
    networks = ppo.make_networks(_spec(), config)
    state = ppo_learning.init_training_state(networks, config, jax.random.PRNGKey(0))
    update = jax.jit(ppo_learning.make_update_step(networks, config))
    rng = np.random.default_rng(0)
    steps = Step(
        observation=rng.normal(size=(1, 5, 3)).astype(np.float32),
        action=np.array([[0, 1, 0, 1, 0]], np.int32),
        reward=np.ones((1, 5), np.float32),
        discount=np.array([[1, 0, 0, 1, 1]], np.float32),
        start_of_episode=np.array([[True, False, False, True, False]]),
        extras={"log_prob": np.full((1, 5), np.log(0.5), np.float32)},
    )
    info = SampleInfo(key=np.zeros(1, np.uint64), probability=np.ones(1), table_size=np.ones(1))
    _, metrics, _ = update(state, ReplaySample(info=info, data=steps))
    np.testing.assert_allclose(metrics["mask_fraction"], 3 / 4)  # steps 0, 1, 3 are real; step 2 is padding

    # Changing only the padding step's action and log-prob leaves the update unchanged.
    altered = steps._replace(action=steps.action.copy(), extras={"log_prob": steps.extras["log_prob"].copy()})
    altered.action[0, 2] = 1
    altered.extras["log_prob"][0, 2] = np.log(0.01)
    new_a, _, _ = update(state, ReplaySample(info=info, data=steps))
    new_b, _, _ = update(state, ReplaySample(info=info, data=altered))
    for a, b in zip(jax.tree_util.tree_leaves(new_a.params), jax.tree_util.tree_leaves(new_b.params)):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)
