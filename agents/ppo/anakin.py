"""PPO's fully jitted form (Anakin): its builder's policy and its own pure update step, over JAX environments."""

import jax
import jax.numpy as jnp

from acmelike.anakin import JaxEnvironment, StepStream
from acmelike.anakin.agent import AnakinAgent, IterationOutputs, uniform_sample_info
from acmelike.types import ReplaySample
from agents.ppo import learning
from agents.ppo.builder import PPOBuilder
from agents.ppo.networks import make_networks


def make_anakin_agent(environment: JaxEnvironment, config) -> AnakinAgent:
    """PPO: `config.batch_size` environments, each writing one sequence of `unroll_length + 1` rows per update
    (the last row, the next sequence's first, only bootstraps), exactly as PPO's queue would serve them."""
    networks = make_networks(environment.spec, config)
    policy = PPOBuilder(config).make_policy(networks=networks, environment_spec=environment.spec)
    update_step = learning.make_update_step(networks, config)
    stream = StepStream(environment, policy)
    num_envs, length = config.batch_size, config.unroll_length

    def init(key):
        learner_key, stream_key, key = jax.random.split(key, 3)
        return learning.init_training_state(networks, config, learner_key), stream.init(stream_key, num_envs), key

    def iteration(carry):
        training_state, stream_state, key = carry
        key, unroll_key = jax.random.split(key)
        stream_state, rows, outputs = stream.unroll(training_state.params, stream_state, unroll_key, length)
        bootstrap = stream.next_row(stream_state)
        data = jax.tree_util.tree_map(lambda r, b: jnp.concatenate([r, b[:, None]], axis=1), rows, bootstrap)
        sample = ReplaySample(info=uniform_sample_info(num_envs, num_envs), data=data)
        training_state, metrics, _ = update_step(training_state, sample)
        outputs = IterationOutputs(outputs.episode_return, outputs.real, jnp.asarray(True), metrics)
        return (training_state, stream_state, key), outputs

    return AnakinAgent("ppo", init, iteration, num_envs, length, lambda carry: carry[0].params, config)
