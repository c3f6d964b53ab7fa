"""Conv torsos for the feed-forward agents (DQN, PPO, discrete CQL): `--config torso=...` on image observations,
the MinAtar paper's network among them; the MLP path's parameters unchanged."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from dm_env import specs
from fakes import discrete_spec

from acmelike.networks import MLP, TORSO_NAMES, MinAtarTorso
from acmelike.types import ReplaySample, SampleInfo, Transition
from agents import cql, dqn, ppo

CONV_TORSOS = [name for name in TORSO_NAMES if name != "mlp"]


MINATAR = discrete_spec(specs.Array((10, 10, 4), np.bool_, "observation"))  # MinAtar Breakout's four object channels


def test_minatar_torso_is_the_papers_network():
    """Young & Tian (2019): 16 filters of 3x3 at stride 1 without padding (10x10 -> 8x8x16), then 128 units."""
    frames = jnp.ones((2, 10, 10, 4), jnp.bool_)
    params = jax.eval_shape(MinAtarTorso().init, jax.random.PRNGKey(0), frames)["params"]
    assert params["Conv_0"]["kernel"].shape == (3, 3, 4, 16)
    assert params["Dense_0"]["kernel"].shape == (8 * 8 * 16, 128)
    assert jax.eval_shape(MinAtarTorso().apply, {"params": params}, frames).shape == (2, 128)


def test_minatar_torso_computes_flax_conv_with_its_parameters_and_initialisation():
    """The torso's conv is a matrix product over patches (fast when vmapped over seeds on CPU): the same
    parameters, initial values and outputs as `nn.Conv(16, (3, 3), padding="VALID")`, also under vmap."""
    import flax.linen as nn

    class Reference(nn.Module):  # the torso written with nn.Conv
        @nn.compact
        def __call__(self, images):
            x = nn.relu(nn.Conv(16, (3, 3), padding="VALID")(images.astype(jnp.float32)))
            return nn.relu(nn.Dense(128)(jnp.reshape(x, (x.shape[0], -1))))

    frames = jnp.asarray(np.random.default_rng(1).random((3, 10, 10, 4)) < 0.3)
    params = MinAtarTorso().init(jax.random.PRNGKey(7), frames)
    reference_params = Reference().init(jax.random.PRNGKey(7), frames)
    equal = jax.tree_util.tree_map(lambda a, b: bool(jnp.array_equal(a, b)), params, reference_params)
    assert all(jax.tree_util.tree_leaves(equal))  # same tree, same initial values
    params = jax.tree_util.tree_map(  # a nonzero bias and a kernel that is not symmetric in any axis
        lambda x: x + 0.01 * jnp.arange(x.size, dtype=x.dtype).reshape(x.shape) / x.size, params)
    np.testing.assert_allclose(MinAtarTorso().apply(params, frames), Reference().apply(params, frames),
                               rtol=1e-5, atol=1e-5)
    stacked = jax.tree_util.tree_map(lambda x: jnp.stack([x, -x]), params)
    np.testing.assert_allclose(jax.vmap(MinAtarTorso().apply, (0, None))(stacked, frames),
                               jax.vmap(Reference().apply, (0, None))(stacked, frames), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("torso", ["minatar_conv", "impala_resnet"])
def test_dqn_and_ppo_read_minatar_frames_through_a_conv_torso(torso):
    frames = jnp.asarray(np.random.default_rng(0).random((2, 10, 10, 4)) < 0.1)
    q_network = dqn.make_networks(MINATAR, dqn.DQNConfig(torso=torso)).q_network
    params = q_network.init(jax.random.PRNGKey(0))
    assert "Conv_0" in params["params"]["layers_0"]  # the conv torso, then the linear Q head
    q_values = q_network.apply(params, frames)
    assert q_values.shape == (2, 3) and bool(jnp.all(jnp.isfinite(q_values)))
    network = ppo.make_networks(MINATAR, ppo.PPOConfig(torso=torso)).network
    ppo_params = network.init(jax.random.PRNGKey(0))
    paths = [jax.tree_util.keystr(path) for path, _ in jax.tree_util.tree_flatten_with_path(ppo_params)[0]]
    assert any("Conv_0" in path for path in paths), paths  # the conv torso, not the MLPs on the flattened frame
    logits, values = network.apply(ppo_params, frames)
    assert logits.shape == (2, 3) and values.shape == (2,)
    # The policy head starts near uniform (orthogonal init scaled by 0.01), as the MLP's does.
    assert float(jnp.max(jnp.abs(jax.nn.softmax(logits) - 1 / 3))) < 0.05


def test_the_mlp_torso_builds_the_same_parameters_as_before():
    """torso="mlp" (the default) must keep the exact network of every stored run: same tree, same values."""
    flat = discrete_spec(specs.Array((4,), np.float32, "observation"), num_actions=2)
    config = dqn.DQNConfig(hidden_sizes=(8, 8))
    built = dqn.make_networks(flat, config).q_network.init(jax.random.PRNGKey(3))
    direct = MLP(layer_sizes=(8, 8, 2)).init(jax.random.PRNGKey(3), jnp.zeros((1, 4), jnp.float32))
    assert jax.tree_util.tree_structure(built) == jax.tree_util.tree_structure(direct)
    assert all(bool(jnp.array_equal(a, b)) for a, b in zip(jax.tree_util.tree_leaves(built),
                                                          jax.tree_util.tree_leaves(direct)))


def test_uint8_frames_name_the_conv_torsos_and_conv_torsos_refuse_flat_vectors():
    frames = discrete_spec(specs.Array((84, 84, 4), np.uint8, "observation"))
    with pytest.raises(ValueError, match="torso=nature_dqn"):
        dqn.make_networks(frames)  # the MLP default
    dqn.make_networks(frames, dqn.DQNConfig(torso="nature_dqn"))
    flat = discrete_spec(specs.Array((4,), np.float32, "observation"))
    for torso in CONV_TORSOS:
        with pytest.raises(ValueError, match=rf"PPO's {torso} torso takes image observations"):
            ppo.make_networks(flat, ppo.PPOConfig(torso=torso))
    for config_class in (dqn.DQNConfig, ppo.PPOConfig, cql.CQLConfig):
        with pytest.raises(ValueError, match=rf"{config_class.__name__}.torso = 'conv'; it must be one of"):
            config_class(torso="conv")


def test_a_dqn_update_with_the_conv_torso_trains_the_torso():
    """One SGD step on MinAtar-shaped transitions changes the conv kernel: the torso is in the loss's graph."""
    from agents.dqn import learning

    config = dqn.DQNConfig(torso="minatar_conv", batch_size=4, num_sgd_steps_per_step=1)
    networks = dqn.make_networks(MINATAR, config)
    state = learning.init_training_state(networks, config, jax.random.PRNGKey(0))
    rng = np.random.default_rng(1)
    batch = Transition(
        observation=rng.random((4, 10, 10, 4)) < 0.2, action=np.array([0, 1, 2, 1], np.int32),
        reward=np.array([1.0, 0.0, 0.0, 1.0], np.float32), discount=np.full(4, 0.99, np.float32),
        next_observation=rng.random((4, 10, 10, 4)) < 0.2,
    )
    sample = ReplaySample(info=SampleInfo(np.arange(4, dtype=np.uint64), np.full(4, 0.25), np.full(4, 4)), data=batch)
    new_state, metrics, _ = jax.jit(learning.make_update_step(networks, config))(state, sample)
    assert np.isfinite(float(metrics["loss"]))
    kernel = lambda s: s.params["params"]["layers_0"]["Conv_0"]["kernel"]  # noqa: E731
    assert not bool(jnp.array_equal(kernel(state), kernel(new_state)))
