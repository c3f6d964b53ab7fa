"""Central batched inference: actors in threads share one InferenceServer; each gets exactly the actions local
inference (a GenericActor with the same parameters and key) chooses, and requests are served together."""

import threading

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from acmelike.actors import GenericActor, categorical_policy_core, epsilon_greedy_core
from acmelike.actors.inference import InferenceClientActor, InferenceServer
from acmelike.wrappers import make_vector_environment

PARAMS = {"w": jax.random.normal(jax.random.PRNGKey(7), (4, 2))}
CORE = categorical_policy_core(lambda params, obs: jnp.tanh(obs) @ params["w"])
NUM_ACTORS, NUM_ENVS, STEPS = 3, 4, 40


class _Fixed:
    params = PARAMS

    def update(self, wait=False):
        pass


def _act(actor, seed):
    """Steps a vector environment through `actor`; returns every action and log-probability chosen."""
    environment = make_vector_environment("CartPole-v1", NUM_ENVS, seed, max_episode_steps=20)
    timestep = environment.reset()
    actor.observe_first(timestep)
    actions, log_probs = [], []
    for _ in range(STEPS):
        action = actor.select_action(timestep.observation)
        timestep = environment.step(action)
        actor.observe(action, timestep)
        actions.append(np.asarray(action))
        log_probs.append(np.asarray(actor._extras["log_prob"]))
    return np.stack(actions), np.stack(log_probs)


def test_central_inference_matches_local_inference_and_batches_requests():
    keys = jax.random.split(jax.random.PRNGKey(0), NUM_ACTORS)
    local = [_act(GenericActor(CORE, keys[a], _Fixed(), num_envs=NUM_ENVS), seed=10 * a) for a in range(NUM_ACTORS)]

    server = InferenceServer(CORE, _Fixed(), max_batch_size=NUM_ACTORS * NUM_ENVS, timeout_s=0.05)
    server.start()
    central = [None] * NUM_ACTORS
    try:
        actors = [InferenceClientActor(server, a, keys[a], NUM_ENVS) for a in range(NUM_ACTORS)]

        def run(a):
            central[a] = _act(actors[a], seed=10 * a)

        threads = [threading.Thread(target=run, args=(a,)) for a in range(NUM_ACTORS)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=120)
    finally:
        server.stop()
    for a in range(NUM_ACTORS):
        np.testing.assert_array_equal(central[a][0], local[a][0])
        np.testing.assert_allclose(central[a][1], local[a][1], rtol=1e-5)
    assert max(server.batch_sizes) > NUM_ENVS, "requests of several actors were served in one batch"
    assert sum(server.batch_sizes) == NUM_ACTORS * STEPS * NUM_ENVS


def test_unregistered_actor_and_oversized_requests_are_refused():
    server = InferenceServer(CORE, _Fixed(), max_batch_size=4, timeout_s=0.0)
    with pytest.raises(KeyError, match="not registered"):
        server.select_action("nobody", np.zeros((1, 4), np.float32), np.ones(1, bool), np.zeros(1, bool))
    with pytest.raises(ValueError, match="max_batch_size"):
        server.register("big", jax.random.split(jax.random.PRNGKey(0), 8))


def test_one_environment_client_matches_a_generic_actor_across_episodes():
    """Without a batch axis (--num-envs 1 under central inference) the client chooses what a GenericActor with the
    same key chooses, its exploration clock running on across episode starts."""
    from acmelike.wrappers import make_gymnasium_environment

    core = epsilon_greedy_core(lambda params, obs: obs @ params["w"], lambda steps: 1.0 - steps / 60.0)

    def act(actor):
        environment = make_gymnasium_environment("CartPole-v1", 3)
        actions = []
        for _ in range(6):  # several short episodes: the server's state is per actor, not per episode
            timestep = environment.reset()
            actor.observe_first(timestep)
            for _ in range(10):
                action = actor.select_action(timestep.observation)
                actions.append(int(action))
                timestep = environment.step(action)
                actor.observe(action, timestep)
                if timestep.last():
                    break
        return actions

    key = jax.random.PRNGKey(5)
    local = act(GenericActor(core, key, _Fixed()))
    server = InferenceServer(core, _Fixed(), max_batch_size=2, timeout_s=0.0)
    server.start()
    try:
        central = act(InferenceClientActor(server, "solo", key))
    finally:
        server.stop()
    assert central == local
    assert len(set(local)) == 2, "both actions occur: exploration and greedy choices are compared"


def test_a_failing_batch_fails_its_requests_and_ends_the_server():
    def broken(params, obs):
        raise ValueError("policy cannot run")

    server = InferenceServer(epsilon_greedy_core(broken, lambda steps: 0.0), _Fixed(), max_batch_size=1, timeout_s=0.0)
    server.register(0, jax.random.split(jax.random.PRNGKey(0), 1))
    ended = []
    thread = threading.Thread(target=lambda: ended.append(pytest.raises(ValueError, server.run)))
    thread.start()
    with pytest.raises(ValueError, match="policy cannot run"):
        server.select_action(0, np.zeros((1, 4), np.float32), np.ones(1, bool), np.zeros(1, bool))
    thread.join(timeout=30)
    assert ended and not thread.is_alive(), "the server ends with the error"
