"""DQN's fully jitted form (Anakin): its builder's policy and its own pure update step, with on-device replay."""

import math

import jax
import jax.numpy as jnp

from acmelike.anakin import JaxEnvironment, TrajectoryBuffer, TransitionRecorder, n_step_transitions
from acmelike.anakin.agent import AnakinAgent, IterationOutputs, uniform_sample_info
from acmelike.types import ReplaySample
from agents.dqn import learning
from agents.dqn.builder import DQNBuilder
from agents.dqn.networks import make_networks


def make_anakin_agent(environment: JaxEnvironment, config, num_envs: int = 4) -> AnakinAgent:
    """DQN: `num_envs` environments record steps into a `TrajectoryBuffer`; each iteration adds
    `rows_per_env` steps per environment, then runs `num_sgd_steps_per_step` SGD steps on uniformly sampled
    n-step transitions, so that samples per inserted transition match `config.samples_per_insert` as closely as
    whole rows allow. Learning starts once the buffer holds `min_replay_size` transitions.

    Uniform replay: `priority_exponent` does not apply (the update's importance weights are all 1); the update's
    priorities are not used. Each environment's actor keeps its own exploration clock, as distributed actors do:
    epsilon reaches `epsilon_final` after `epsilon_decay_steps` steps of each environment.
    """
    sgd_steps = config.num_sgd_steps_per_step
    inserts = sgd_steps * config.batch_size / config.samples_per_insert  # transitions per iteration
    rows_per_env = max(1, round(inserts / num_envs))
    networks = make_networks(environment.spec, config)
    policy = DQNBuilder(config).make_policy(networks=networks, environment_spec=environment.spec)
    update_step = learning.make_update_step(networks, config)
    recorder = TransitionRecorder(environment, policy)
    time_axis = max(config.max_replay_size // num_envs, config.n_step + rows_per_env)  # steps kept per environment
    buffer = TrajectoryBuffer(
        max_length=time_axis,
        num_envs=num_envs,
        sequence_length=config.n_step,
        min_length=min(time_axis, max(config.n_step, math.ceil(config.min_replay_size / num_envs))),
    )

    def init(key):
        learner_key, recorder_key, key = jax.random.split(key, 3)
        recorder_state = recorder.init(recorder_key, num_envs)
        _, example, _ = recorder.record(networks.q_network.init(learner_key), recorder_state, key)
        buffer_state = buffer.init(jax.tree_util.tree_map(lambda x: x[0], example))
        return learning.init_training_state(networks, config, learner_key), recorder_state, buffer_state, key

    def sgd_step(training_state, inputs):
        buffer_state, key = inputs
        records = buffer.sample(buffer_state, key, config.batch_size)
        transitions = n_step_transitions(records, config.discount)
        size = buffer.size(buffer_state) * num_envs
        sample = ReplaySample(info=uniform_sample_info(size, config.batch_size), data=transitions)
        training_state, metrics, _ = update_step(training_state, sample)
        return training_state, metrics

    def iteration(carry):
        training_state, recorder_state, buffer_state, key = carry
        key, unroll_key, sample_key = jax.random.split(key, 3)
        recorder_state, records, episode_returns = recorder.unroll(
            training_state.params, recorder_state, unroll_key, rows_per_env
        )
        buffer_state = buffer.add(buffer_state, records)
        keys = jax.random.split(sample_key, sgd_steps)

        def learn(training_state):
            return jax.lax.scan(lambda s, k: sgd_step(s, (buffer_state, k)), training_state, keys)

        def wait(training_state):  # the buffer holds fewer than min_replay_size transitions
            metrics = jax.eval_shape(learn, training_state)[1]
            return training_state, jax.tree_util.tree_map(lambda m: jnp.full(m.shape, jnp.nan, m.dtype), metrics)

        learned = buffer.can_sample(buffer_state)
        training_state, metrics = jax.lax.cond(learned, learn, wait, training_state)
        metrics = {name: jnp.mean(value) for name, value in metrics.items()}
        outputs = IterationOutputs(episode_returns, jnp.ones_like(episode_returns, bool), learned, metrics)
        return (training_state, recorder_state, buffer_state, key), outputs

    return AnakinAgent("dqn", init, iteration, num_envs, rows_per_env, lambda carry: carry[0].params, config)
