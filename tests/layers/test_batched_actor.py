"""GenericActor + BatchedAdder + EnvironmentLoop on a vector environment against GenericActor + adder + EnvironmentLoop
on one environment.

A real in-process Reverb server; CartPole with a 15-step limit (random-ish policies end episodes by termination
and by truncation); a small random MLP policy.
"""

import gymnasium
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from stack import require

pytestmark = pytest.mark.classic
reverb = require("reverb")

from acmelike.actors import GenericActor, categorical_policy_core, epsilon_greedy_core
from acmelike.adders import EndBehavior, NStepTransitionAdder, SequenceAdder
from acmelike.adders.batched import BatchedAdder, UnbatchedIterator, batched_tables
from acmelike.builders import policy_extras_spec
from acmelike.loggers import NoOpLogger
from acmelike.replay import queue_table
from acmelike.replay.reverb_tables import to_reverb_table
from acmelike.specs import make_environment_spec
from acmelike.wrappers import GymnasiumToDmEnv, make_vector_environment
from environment_loops import EnvironmentLoop

LIMIT = 15
PARAMS = {"w": jax.random.normal(jax.random.PRNGKey(7), (4, 2))}


def logits(params, observations):
    return jnp.tanh(observations) @ params["w"]


def single_env(seed):
    return GymnasiumToDmEnv(gymnasium.make("CartPole-v1", max_episode_steps=LIMIT), seed=seed, single_precision=True)


def vector_env(num_envs, seed):
    return make_vector_environment("CartPole-v1", num_envs, seed, numpy_vectorised=False, max_episode_steps=LIMIT)


CORES = {
    "categorical": lambda: categorical_policy_core(logits),
    "greedy": lambda: categorical_policy_core(logits, greedy=True),
    "epsilon": lambda: epsilon_greedy_core(logits, lambda steps: 0.5),
}
ADDERS = {
    "sequence": (
        lambda client, table: SequenceAdder(
            client=client, table_names=table, sequence_length=6, period=5, end_of_episode_behavior=EndBehavior.CONTINUE
        ),
        lambda spec, extras: SequenceAdder.signature(spec, extras, sequence_length=6),
    ),
    "n_step": (
        lambda client, table: NStepTransitionAdder(client=client, table_names=table, n_step=3, discount=0.9),
        lambda spec, extras: NStepTransitionAdder.signature(spec, extras),
    ),
}
SPEC = make_environment_spec(single_env(0))
# (adder, core) -> table roles: "reference<i>" for unbatched actors, "batched" for the BatchedAdder.
CASES = {("sequence", "categorical"): 1, ("n_step", "epsilon"): 1, ("sequence", "greedy"): 4, ("n_step", "greedy"): 4}


@pytest.fixture(scope="module")
def server():
    """One server for the module (each start/stop costs seconds): a queue per case and role."""
    tables = []
    for (adder_name, core_name), num_envs in CASES.items():
        signature = ADDERS[adder_name][1](SPEC, policy_extras_spec(CORES[core_name]()))
        for i in range(num_envs):
            tables.append(queue_table(name=f"{adder_name}-{core_name}-reference{i}", max_size=10_000,
                                      signature=signature))
        batched = queue_table(name=f"{adder_name}-{core_name}-batched", max_size=10_000, signature=signature)
        tables.extend(batched_tables([batched], num_envs))
    server = reverb.Server([to_reverb_table(table) for table in tables], port=None)
    yield server
    server.stop()


def read_items(server, table):
    """Every item of a queue in insertion order (groups of a batched table split into single items)."""
    client = reverb.Client(f"localhost:{server.port}")
    size = client.server_info()[table].current_size
    samples = client.sample(table, num_samples=size, emit_timesteps=False, unpack_as_table_signature=True)
    items = []
    for sample in samples:
        item = sample.data
        if table.endswith("batched"):
            k = len(jax.tree_util.tree_leaves(item)[0])
            items.extend(jax.tree_util.tree_map(lambda x: x[i], item) for i in range(k))
        else:
            items.append(item)
    return items


def _assert_same_items(actual, expected):
    assert len(actual) == len(expected) > 0
    for a, e in zip(actual, expected):
        for x, y in zip(jax.tree_util.tree_leaves(a), jax.tree_util.tree_leaves(e), strict=True):
            np.testing.assert_allclose(x, y, rtol=1e-6)


class _Fixed:
    """A variable client holding fixed parameters."""

    params = PARAMS

    def update(self, wait=False):
        pass


def _unbatched_items(server, adder_name, core_name, index, seed, key, episodes):
    table = f"{adder_name}-{core_name}-reference{index}"
    client = reverb.Client(f"localhost:{server.port}")
    adder = ADDERS[adder_name][0](client, table)
    actor = GenericActor(CORES[core_name](), key, variable_client=_Fixed(), adder=adder)
    EnvironmentLoop(single_env(seed), actor, logger=NoOpLogger()).run(num_episodes=episodes)
    adder.close()
    return read_items(server, table)


def _batched_items(server, adder_name, core_name, seed, key, num_envs, episodes):
    table = f"{adder_name}-{core_name}-batched"
    client = reverb.Client(f"localhost:{server.port}")
    adder = BatchedAdder(
        client=client, num_envs=num_envs, make_adder=lambda c: ADDERS[adder_name][0](c, table), max_in_flight_items=0
    )
    actor = GenericActor(CORES[core_name](), key, _Fixed(), adder, num_envs=num_envs)
    loop = EnvironmentLoop(vector_env(num_envs, seed), actor, logger=NoOpLogger())
    finished = [loop.run_episode() for _ in range(episodes)]
    adder.close()
    return read_items(server, table), finished


@pytest.mark.parametrize("adder_name, core_name", [("sequence", "categorical"), ("n_step", "epsilon")])
def test_one_sub_environment_writes_the_unbatched_actors_items(server, adder_name, core_name):
    key = jax.random.PRNGKey(3)
    expected = _unbatched_items(server, adder_name, core_name, 0, seed=11, key=jax.random.split(key, 1)[0], episodes=6)
    actual, finished = _batched_items(server, adder_name, core_name, seed=11, key=key, num_envs=1, episodes=6)
    _assert_same_items(actual, expected)
    assert [r["sub_environment"] for r in finished] == [0] * 6


@pytest.mark.parametrize("adder_name", ["sequence", "n_step"])
def test_every_item_comes_from_one_sub_environment(server, adder_name):
    """Greedy actions depend on the observation only, so sub-environment i (seed 20 + i) writes what a single
    environment seeded 20 + i writes: every stored item must be one of those, and each sub-environment's in order."""
    num_envs, key = 4, jax.random.PRNGKey(0)
    references = [
        _unbatched_items(server, adder_name, "greedy", i, seed=20 + i, key=key, episodes=8) for i in range(num_envs)
    ]
    actual, finished = _batched_items(server, adder_name, "greedy", seed=20, key=key, num_envs=num_envs, episodes=16)
    assert {r["sub_environment"] for r in finished} == set(range(num_envs))
    next_index = [0] * num_envs
    for item in actual:
        owners = []
        for i, reference in enumerate(references):
            if next_index[i] < len(reference):
                leaves = zip(jax.tree_util.tree_leaves(item), jax.tree_util.tree_leaves(reference[next_index[i]]), strict=True)
                if all(np.allclose(x, y, rtol=1e-6, atol=1e-7) for x, y in leaves):
                    owners.append(i)
        assert len(owners) == 1, "each item is the next item of exactly one sub-environment"
        next_index[owners[0]] += 1
    assert len(actual) >= 4 * num_envs


def test_unbatched_iterator_serves_batches_of_single_items_in_order():
    from acmelike.types import ReplaySample, SampleInfo

    class Source:
        samples_per_next = {"q": 2}
        calls = 0

        def __next__(self):
            start = 30 * Source.calls
            Source.calls += 1
            data = start + np.arange(2 * 3 * 5).reshape(2, 3, 5)  # b=2 groups of K=3 items of shape [5]
            info = SampleInfo(key=np.array([10, 11]) + Source.calls, probability=np.ones(2), table_size=np.full(2, 4))
            return ReplaySample(info=info, data=data)

    iterator = UnbatchedIterator(Source(), items_per_write=3, batch_size=4)  # 6 items per pull, 4 per batch
    batches = [next(iterator) for _ in range(3)]
    assert all(b.data.shape == (4, 5) for b in batches) and Source.calls == 2
    np.testing.assert_array_equal(np.concatenate([b.data for b in batches]), np.arange(60).reshape(12, 5))
    np.testing.assert_array_equal(np.concatenate([b.info.key for b in batches]), [11] * 3 + [12] * 3 + [12] * 3 + [13] * 3)
    assert iterator.samples_per_next == {"q": 2}
