"""Bad input gets a clear error that says what was wrong and how to fix it."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from dm_env import specs
from run_helpers import command_line

from acmelike.learners import NonFiniteLossError, SGDLearner
from acmelike.specs import EnvironmentSpec
from acmelike.types import ReplaySample, SampleInfo, Transition
from agents import dqn, ppo
from agents.dqn import learning as dqn_learning


def _spec(actions, observations=None):
    return EnvironmentSpec(
        observations=observations or specs.Array((4,), np.float32, "observation"),
        actions=actions,
        rewards=specs.Array((), np.float32),
        discounts=specs.BoundedArray((), np.float32, 0.0, 1.0),
    )


@pytest.mark.parametrize("make_networks, agent", [(dqn.make_networks, "DQN"), (ppo.make_networks, "PPO")])
def test_continuous_actions_for_a_discrete_agent_names_both(make_networks, agent):
    box = specs.BoundedArray((1,), np.float32, -2.0, 2.0, name="action")
    with pytest.raises(ValueError) as error:
        make_networks(_spec(box))
    message = str(error.value)
    assert agent in message and "DiscreteArray" in message and "BoundedArray" in message


def test_non_float_observations_are_rejected_with_the_spec():
    with pytest.raises(ValueError, match="observation spec"):
        dqn.make_networks(_spec(specs.DiscreteArray(2), specs.Array((4,), np.int64, "observation")))


def test_bool_images_are_flattened_by_the_mlp_agents_and_uint8_frames_refused():
    """MinAtar's observations are 10x10xC bool channels: an MLP reads them flattened as 0/1. uint8 frames would enter
    unscaled, so the MLP agents refuse them and name the spec."""
    from agents import muzero, r2d2

    binary = _spec(specs.DiscreteArray(3), specs.Array((10, 10, 4), np.bool_, "observation"))
    images = jnp.asarray(np.random.default_rng(0).random((2, 10, 10, 4)) < 0.1)
    for package in (ppo, muzero):
        package.make_networks(binary)
    q_network = dqn.make_networks(binary).q_network
    q_values = q_network.apply(q_network.init(jax.random.PRNGKey(0)), images)
    assert q_values.shape == (2, 3) and bool(jnp.all(jnp.isfinite(q_values)))
    r2d2.make_networks(binary, r2d2.AGENT.config_class(torso="mlp"))
    frames = _spec(specs.DiscreteArray(3), specs.Array((10, 10, 4), np.uint8, "observation"))
    for package in (dqn, ppo, muzero):
        with pytest.raises(ValueError, match="uint8"):
            package.make_networks(frames)


def test_config_errors_name_the_field_and_range():
    with pytest.raises(ValueError, match=r"DQNConfig.n_step = 0; it must be >= 1"):
        dqn.DQNConfig(n_step=0)
    with pytest.raises(ValueError, match=r"PPOConfig.num_minibatches"):
        ppo.PPOConfig(batch_size=1, unroll_length=10, num_minibatches=3)


def test_nan_loss_in_dqn_learner_names_the_step_and_the_loss():
    spec = _spec(specs.DiscreteArray(2))
    config = dqn.DQNConfig(batch_size=2, hidden_sizes=(8,))
    networks = dqn.make_networks(spec, config)
    batch = 2
    transitions = Transition(
        observation=np.zeros((batch, 4), np.float32),
        action=np.zeros((batch,), np.int32),
        reward=np.array([np.nan, 0.0], np.float32),  # a NaN reward from a broken environment
        discount=np.ones((batch,), np.float32),
        next_observation=np.zeros((batch, 4), np.float32),
    )
    sample = ReplaySample(info=SampleInfo(np.zeros(batch, np.uint64), np.full(batch, 0.5), np.full(batch, 2)), data=transitions)
    learner = SGDLearner(
        state=dqn_learning.init_training_state(networks, config, jax.random.PRNGKey(0)),
        update_step=dqn_learning.make_update_step(networks, config),
        iterator=iter([sample]),
        variables={"policy": lambda s: s.params},
        name="DQN learner",
    )
    before = learner.get_variables(["policy"])[0]
    learner.step()
    with pytest.raises(NonFiniteLossError, match=r"DQN learner: loss 'loss' is nan at SGD step 1"):
        learner.wait()
    after = learner.get_variables(["policy"])[0]
    assert all(jax.tree_util.tree_leaves(jax.tree_util.tree_map(lambda a, b: bool(jnp.all(a == b)), before, after)))


def test_unknown_environment_lists_choices_and_suggests():
    from acmelike.wrappers import check_gymnasium_id

    with pytest.raises(ValueError) as error:
        check_gymnasium_id("CartPole-v2")
    assert "CartPole-v1" in str(error.value)


@pytest.mark.parametrize("environment", ["gymnax/CartPole-v1", "brax/inverted_pendulum", "playground/CartpoleBalance"])
def test_a_jax_environment_outside_anakin_is_sent_to_launch_anakin(environment):
    from launch.experiments.make import unknown_environment_message
    from launch.registry import agent_definition

    message = unknown_environment_message(environment, agent_definition("sac"))
    assert f"--env {environment} --launch anakin" in message and "gymnasium environment" not in message, message


def test_command_line_rejects_unknown_names_before_building_anything():
    from launch.registry import AGENTS

    result = command_line("--agent", "no_such_agent", "--env", "CartPole-v1", "--steps", "10")
    assert result.returncode == 2
    assert f"Unknown agent 'no_such_agent'. Choose one of: {', '.join(sorted(AGENTS))}" in result.stderr


def test_an_unknown_replay_is_refused_by_name():
    # (A distributed program takes any config: its nodes share one Reverb server whatever `replay` says, and its
    # config.json records "reverb".)
    from launch import make_experiment_config

    with pytest.raises(ValueError, match="ExperimentConfig.replay = 'nowhere'; it must be one of local, reverb"):
        make_experiment_config(agent="dqn", environment="CartPole-v1", max_num_actor_steps=10, replay="nowhere")
