"""Every Reverb adder against a small pure-Python reference, on drawn episodes (hypothesis).

The references below are written from the adders' docstrings (the definitions of their items), not from their
code: per-step rows and n-step sums are computed directly, in float64, with NumPy broadcasting. Drawn: episode
lengths (1, shorter than n or the sequence length, longer), episodes cut short by the next `add_first`, n,
gamma, sequence length, period, every end-of-episode behaviour, padding functions, nested observations, extras,
scalar / array / nested rewards and discounts that broadcast, and observation dtypes.

Tables here have no signature, so the adders learn each field from the first step (tests/test_adders_validation.py
covers tables with signatures); items come back as flat lists of arrays in the order of `jax.tree_util` leaves,
which is Reverb's order too (dict keys sorted, namedtuple fields in order). One in-process server for the module
(full stack only), and once more the same tables in a seeded `LocalReplay` (acmelike.replay.local); each example
clears its table first.
"""

from typing import Any, List, NamedTuple

import dm_env
import jax
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from stack import require

from acmelike.adders import EndBehavior, EpisodeAdder, NStepTransitionAdder, SequenceAdder
from acmelike.replay import queue_table
from acmelike.replay.local import LocalReplay
from acmelike.types import Step, Transition

# A fixed, modest number of examples per adder: together these tests stay well under CI's budget for adders.
EXAMPLES = settings(max_examples=300, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
TABLES = ("nstep", "sequence", "episode")


@pytest.fixture(scope="module", params=[pytest.param("reverb", marks=pytest.mark.classic), "local"])
def client(request):
    tables = [queue_table(name=name, max_size=100_000, signature=None) for name in TABLES]
    if request.param == "local":
        yield LocalReplay(tables, seed=0)
        return
    reverb = require("reverb")
    from acmelike.replay.reverb_tables import to_reverb_table

    server = reverb.Server([to_reverb_table(table) for table in tables], port=None)
    yield reverb.Client(f"localhost:{server.port}")
    server.stop()


# Drawing specs and episodes. A leaf spec is (shape, dtype); a spec is a leaf spec or a dict of specs.

OBSERVATION_SPECS = [
    ((2,), np.float32),
    ((), np.int32),
    {"pixels": ((2, 3), np.uint8), "vector": ((3,), np.float64)},
    {"a": {"b": ((), np.float32), "c": ((2,), np.int32)}, "d": ((), np.uint8)},
]
ACTION_SPECS = [((), np.int32), ((2,), np.float32)]
EXTRAS_SPECS = [(), {"logp": ((), np.float32)}, {"core": {"h": ((2,), np.float32)}, "k": ((), np.int32)}]
# (reward, discount) shape trees that combine (a nested discount needs the reward's structure or a leaf reward).
REWARD_DISCOUNT_SPECS = [
    ((), ()),
    ((2,), ()),
    ((), (2,)),
    ((2,), (2,)),
    ((2, 1), (3,)),
    ({"a": (), "b": (2,)}, ()),
    ({"a": (), "b": (2,)}, (2,)),
    ({"a": (), "b": (2,)}, {"a": (), "b": ()}),
    ((), {"a": (), "b": (2,)}),
]


def tree_map_specs(f, spec):
    """f(shape, dtype) for every (shape, dtype) leaf of a dict tree."""
    if isinstance(spec, dict):
        return {key: tree_map_specs(f, value) for key, value in spec.items()}
    if spec == ():
        return ()
    return f(*spec)


def shapes_to_float_spec(shapes):
    if isinstance(shapes, dict):
        return {key: shapes_to_float_spec(value) for key, value in shapes.items()}
    return (shapes, np.float32)


def random_value(rng, shape, dtype):
    if np.dtype(dtype).kind == "f":
        return (rng.integers(-8, 8, size=shape) / 4).astype(dtype)
    if np.dtype(dtype) == np.uint8:
        return rng.integers(0, 256, size=shape).astype(dtype)
    return rng.integers(-100, 100, size=shape).astype(dtype)


def random_reward_leaf(rng, shape, form):
    value = rng.integers(-8, 8, size=shape) / 4
    if shape == () and form == "python":
        return float(value)
    return np.asarray(value, np.float32 if form == "float32" else np.float64)


def random_discount_leaf(rng, shape):
    return rng.choice([0.0, 0.5, 0.9, 1.0], size=shape).astype(np.float32)


class Episode(NamedTuple):
    observations: List[Any]  # o_0 .. o_T
    actions: List[Any]  # a_0 .. a_{T-1}
    rewards: List[Any]  # r_t received after a_t
    discounts: List[Any]
    extras: List[Any]
    end: str  # "termination", "truncation", or "cut" (the next add_first comes before a last timestep)


@st.composite
def episodes(draw, max_length=8):
    """A list of 1-3 Episodes under one drawn set of specs; the last one always ends with a last timestep."""
    observation_spec = draw(st.sampled_from(OBSERVATION_SPECS))
    action_spec = draw(st.sampled_from(ACTION_SPECS))
    extras_spec = draw(st.sampled_from(EXTRAS_SPECS))
    reward_shapes, discount_shapes = draw(st.sampled_from(REWARD_DISCOUNT_SPECS))
    reward_form = draw(st.sampled_from(["python", "float32", "float64"]))
    lengths = draw(st.lists(st.integers(1, max_length), min_size=1, max_size=3))
    ends = [draw(st.sampled_from(["termination", "truncation", "cut"])) for _ in lengths[:-1]]
    ends.append(draw(st.sampled_from(["termination", "truncation"])))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))

    def values(spec, n):
        return [tree_map_specs(lambda shape, dtype: random_value(rng, shape, dtype), spec) for _ in range(n)]

    result = []
    for length, end in zip(lengths, ends):
        rewards = [
            tree_map_specs(lambda shape, _: random_reward_leaf(rng, shape, reward_form),
                           shapes_to_float_spec(reward_shapes))
            for _ in range(length)
        ]
        discounts = [
            tree_map_specs(lambda shape, _: random_discount_leaf(rng, shape), shapes_to_float_spec(discount_shapes))
            for _ in range(length)
        ]
        if end == "termination":  # the full discount structure (a learned spec would otherwise become scalar)
            discounts[-1] = jax.tree_util.tree_map(np.zeros_like, discounts[-1])
        result.append(
            Episode(values(observation_spec, length + 1), values(action_spec, length), rewards, discounts,
                    values(extras_spec, length), end)
        )
    return result


def feed(adder, stream, *, on_step_error=None):
    """Feeds episodes to an adder as an actor would; returns which episodes raised (EpisodeAdder's too long)."""
    raised = []
    for episode in stream:
        adder.add_first(dm_env.restart(episode.observations[0]))
        length = len(episode.actions)
        for t in range(length):
            if t == length - 1 and episode.end != "cut":
                step = dm_env.TimeStep(dm_env.StepType.LAST, episode.rewards[t], episode.discounts[t],
                                       episode.observations[t + 1])
            else:
                step = dm_env.transition(episode.rewards[t], episode.observations[t + 1], episode.discounts[t])
            try:
                adder.add(episode.actions[t], step, episode.extras[t])
            except ValueError as error:
                if on_step_error is None or not on_step_error(error):
                    raise
                raised.append(episode)
                break
    adder.close()
    return raised


def read_flat(client, table):
    size = client.server_info()[table].current_size
    if size == 0:
        return []
    if isinstance(client, LocalReplay):  # one at a time: items may differ in length
        return [[leaf[0] for leaf in jax.tree_util.tree_leaves(client.table(table).sample(1).data)]
                for _ in range(size)]
    return [sample.data for sample in client.sample(table, size, emit_timesteps=False)]


def assert_items_equal(actual, expected):
    """actual: flat lists of arrays from Reverb; expected: item trees (Transition / Step) of arrays."""
    assert len(actual) == len(expected), (len(actual), len(expected))
    for index, (flat, tree) in enumerate(zip(actual, expected)):
        leaves = jax.tree_util.tree_leaves(tree)
        assert len(flat) == len(leaves), (index, len(flat), len(leaves))
        for got, want in zip(flat, leaves):
            want = np.asarray(want)
            assert got.shape == want.shape and got.dtype == want.dtype, (index, got, want)
            if want.dtype.kind == "f":
                np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5, err_msg=f"item {index}")
            else:
                np.testing.assert_array_equal(got, want, err_msg=f"item {index}")


def as_float32(tree):
    return jax.tree_util.tree_map(lambda x: np.asarray(x, np.float32), tree)


def is_leaf(tree):
    return not isinstance(tree, dict)


# NStepTransitionAdder's definition (its class docstring).


def pair_map(f, reward, discount):
    """A single discount applies to every reward leaf; a single reward to every discount leaf; else leafwise."""
    if is_leaf(discount):
        return jax.tree_util.tree_map(lambda r: f(r, discount), reward)
    if is_leaf(reward):
        return jax.tree_util.tree_map(lambda d: f(reward, d), discount)
    return jax.tree_util.tree_map(f, reward, discount)


def reference_nstep(stream, n, gamma):
    items = []
    for episode in stream:
        length = len(episode.actions)
        starts = range(length) if episode.end != "cut" else range(length - n + 1)  # cut: only full windows
        for s in starts:
            m = min(n, length - s)
            rewards = jax.tree_util.tree_map(lambda *r: np.stack([np.asarray(x, np.float64) for x in r]),
                                             *episode.rewards[s:s + m])
            discounts = jax.tree_util.tree_map(lambda *d: np.stack([np.asarray(x, np.float64) for x in d]),
                                               *episode.discounts[s:s + m])

            def n_step_return(r, d):
                # sum_{k<m} gamma^k (prod_{j<k} d_{s+j}) r_{s+k}, broadcast
                return sum(gamma**k * np.prod(d[:k], axis=0) * np.ones_like(d[0]) * r[k] for k in range(m))

            reward = pair_map(n_step_return, rewards, discounts)
            discount = jax.tree_util.tree_map(lambda d: gamma**m * np.prod(d, axis=0), discounts)
            items.append(Transition(
                observation=episode.observations[s],
                action=episode.actions[s],
                reward=as_float32(reward),
                discount=as_float32(discount),
                next_observation=episode.observations[s + m],
                extras=episode.extras[s],
            ))
    return items


@EXAMPLES
@given(stream=episodes(), n=st.integers(1, 5), gamma=st.sampled_from([0.0, 0.5, 0.99, 1.0]),
       in_flight=st.sampled_from([0, 5, None]))
def test_nstep_transition_adder_matches_reference(client, stream, n, gamma, in_flight):
    client.reset("nstep")
    adder = NStepTransitionAdder(client=client, table_names="nstep", n_step=n, discount=gamma,
                                 max_in_flight_items=in_flight)
    feed(adder, stream)
    assert_items_equal(read_flat(client, "nstep"), reference_nstep(stream, n, gamma))


# Step rows (the SequenceAdder and EpisodeAdder class docstrings).


def episode_rows(episode):
    """Step(o_t, a_t, r_t, d_t, start_t, extras_t) for every action, then (for an episode that ended) the final row:
    the last observation, start_of_episode False, zeros elsewhere."""
    rows = [
        Step(episode.observations[t], episode.actions[t], as_float32(episode.rewards[t]),
             as_float32(episode.discounts[t]), np.asarray(t == 0), episode.extras[t])
        for t in range(len(episode.actions))
    ]
    if episode.end != "cut":
        zeros = jax.tree_util.tree_map(np.zeros_like, rows[-1])
        rows.append(zeros._replace(observation=episode.observations[-1], start_of_episode=np.asarray(False)))
    return rows


def zero_row(row):
    return jax.tree_util.tree_map(np.zeros_like, row)._replace(start_of_episode=np.asarray(False))


def stack(rows):
    return jax.tree_util.tree_map(lambda *x: np.stack(x), *rows)


def reference_sequence(stream, length, period, behavior):
    def is_write_point(count):
        return count == length or (count > length and (count - length) % period == 0)

    items, rows = [], []
    for episode in stream:
        for row in episode_rows(episode):
            rows.append(row)
            if is_write_point(len(rows)):
                items.append(stack(rows[-length:]))
        if episode.end == "cut":
            rows = []  # the partial episode is dropped; CONTINUE's stream starts again
            continue
        if behavior is EndBehavior.CONTINUE:
            continue
        count = len(rows)
        if not is_write_point(count):
            next_write = length if count < length else count + (length - count) % period
            real = count - (next_write - length)
            zero = zero_row(rows[-1])
            if behavior is EndBehavior.WRITE:
                items.append(stack(rows[-length:] if count >= length else rows + [zero] * (length - count)))
            elif behavior is EndBehavior.ZERO_PAD and real > 0:
                items.append(stack(rows[next_write - length:] + [zero] * (next_write - count)))
            elif behavior is EndBehavior.TRUNCATE and real > 0:
                items.append(stack(rows[next_write - length:]))
        rows = []
    return items


@EXAMPLES
@given(stream=episodes(), length=st.integers(1, 5), period=st.integers(1, 5),
       behavior=st.sampled_from(list(EndBehavior)), in_flight=st.sampled_from([0, 3, None]))
def test_sequence_adder_matches_reference(client, stream, length, period, behavior, in_flight):
    client.reset("sequence")
    adder = SequenceAdder(client=client, table_names="sequence", sequence_length=length, period=period,
                          end_of_episode_behavior=behavior, max_in_flight_items=in_flight)
    feed(adder, stream)
    assert_items_equal(read_flat(client, "sequence"), reference_sequence(stream, length, period, behavior))


PADDING_FNS = {
    "none": None,
    "zeros": np.zeros,
    "minus_one": lambda shape, dtype: np.zeros(shape, dtype) - 1,  # float64 / int64 for scalar fields
    "python_seven": lambda shape, dtype: 7,  # a scalar for every shape: broadcast
}


def reference_episode(stream, max_length, padding_fn):
    items = []
    for episode in stream:
        rows = episode_rows(episode)
        if episode.end == "cut" or len(rows) > max_length:
            continue
        if padding_fn is not None:
            def pad(zero):
                return np.broadcast_to(np.asarray(padding_fn(zero.shape, zero.dtype)).astype(zero.dtype), zero.shape)

            rows += [jax.tree_util.tree_map(pad, zero_row(rows[-1]))] * (max_length - len(rows))
        items.append(stack(rows))
    return items


@EXAMPLES
@given(stream=episodes(), max_length=st.integers(2, 10), padding=st.sampled_from(sorted(PADDING_FNS)))
def test_episode_adder_matches_reference(client, stream, max_length, padding):
    client.reset("episode")
    padding_fn = PADDING_FNS[padding]
    adder = EpisodeAdder(client=client, table_names="episode", max_sequence_length=max_length, padding_fn=padding_fn)
    raised = feed(adder, stream, on_step_error=lambda error: "max_sequence_length" in str(error))
    too_long = [episode for episode in stream if len(episode.actions) + 1 > max_length and episode.end != "cut"
                or len(episode.actions) > max_length]
    assert raised == too_long
    assert_items_equal(read_flat(client, "episode"), reference_episode(stream, max_length, padding_fn))
