"""Adders against tables with signatures: the three regressions of issue 14, steps that cannot be written, and casts.

A step that cannot be written raises `InvalidStepError` naming the field, the expected and received shape/dtype
and the step index, before anything of it is appended; the items written before it are in the table at once
and the adder is ready for the next episode. One in-process server for the module; each test clears its tables.
"""

from typing import NamedTuple

import dm_env
import jax.numpy as jnp
import numpy as np
import pytest
from dm_env import specs
from stack import require

pytestmark = pytest.mark.classic
reverb = require("reverb")

from acmelike.adders import (  # noqa: E402
    EndBehavior,
    EpisodeAdder,
    InvalidStepError,
    NStepTransitionAdder,
    SequenceAdder,
)
from acmelike.replay import ArraySpec, queue_table  # noqa: E402
from acmelike.replay.reverb_tables import to_reverb_table  # noqa: E402
from acmelike.specs import EnvironmentSpec  # noqa: E402
from acmelike.types import Transition  # noqa: E402

F32 = np.float32
SCALAR = specs.Array((), F32)
PAIR = specs.Array((2,), F32)
ENV = EnvironmentSpec(observations=PAIR, actions=specs.Array((), np.int32), rewards=SCALAR, discounts=SCALAR)
EXTRAS = {"logp": SCALAR}


def env(rewards, discounts, observations=PAIR, actions=specs.Array((), np.int32)):
    return EnvironmentSpec(observations=observations, actions=actions, rewards=rewards, discounts=discounts)


NESTED_REWARD = {"a": SCALAR, "b": PAIR}
CAST_ENV = env(SCALAR, SCALAR, observations={"image": specs.Array((2, 2), F32), "count": specs.Array((), np.int64)})
OLD_STYLE = Transition(  # what NStepTransitionAdder.signature built before issue 14: reward () with discount (2,)
    observation=ArraySpec((2,), np.float32), action=ArraySpec((), np.int32),
    reward=ArraySpec((), np.float32), discount=ArraySpec((2,), np.float32),
    next_observation=ArraySpec((2,), np.float32), extras=(),
)
class Camera(NamedTuple):
    image: specs.Array
    on: specs.Array


# Specs that are unusual but valid: a namedtuple observation with uint8 and bool leaves, a tuple action, array
# rewards against a scalar discount, float64 observations.
UNUSUAL_ENV = env(specs.Array((2,), F32), SCALAR,
                  observations=Camera(specs.Array((2, 2), np.uint8), specs.Array((), bool)),
                  actions=(specs.DiscreteArray(3), specs.BoundedArray((2,), F32, -1.0, 1.0)))
UNUSUAL_EXTRAS = {"state": {"h": PAIR}, "step": specs.Array((), np.int64)}
FLOAT64_ENV = env(SCALAR, SCALAR, observations=specs.Array((), np.float64))
UNUSUAL = {
    "nstep": lambda spec, extras: NStepTransitionAdder.signature(spec, extras),
    "sequence": lambda spec, extras: SequenceAdder.signature(spec, extras, 3),
    "truncate": lambda spec, extras: SequenceAdder.signature(spec, extras),
    "episode": lambda spec, extras: EpisodeAdder.signature(spec, extras, 6),
}
SIGNATURES = {
    "nstep": NStepTransitionAdder.signature(ENV, EXTRAS),
    "sequence": SequenceAdder.signature(ENV, EXTRAS, sequence_length=2),
    "episode": EpisodeAdder.signature(ENV, EXTRAS),
    "episode_padded": EpisodeAdder.signature(ENV, EXTRAS, sequence_length=5),
    "scalar_reward_pair_discount": NStepTransitionAdder.signature(env(SCALAR, PAIR)),
    "nested_reward_pair_discount": NStepTransitionAdder.signature(env(NESTED_REWARD, PAIR)),
    "nested_reward_nested_discount": NStepTransitionAdder.signature(env(NESTED_REWARD, {"a": SCALAR, "b": SCALAR})),
    "scalar_reward_nested_discount": NStepTransitionAdder.signature(env(SCALAR, {"x": SCALAR, "y": PAIR})),
    "sequence_nested_discount": SequenceAdder.signature(env(NESTED_REWARD, {"a": SCALAR, "b": PAIR}), (), 3),
    "casts": NStepTransitionAdder.signature(CAST_ENV),
    "old_style": OLD_STYLE,
    "unsigned": None,
    **{f"unusual_{kind}": make(UNUSUAL_ENV, UNUSUAL_EXTRAS) for kind, make in UNUSUAL.items()},
    **{f"float64_{kind}": make(FLOAT64_ENV, ()) for kind, make in UNUSUAL.items()},
}


@pytest.fixture(scope="module")
def client():
    server = reverb.Server(
        [to_reverb_table(queue_table(name=name, max_size=1000, signature=signature))
         for name, signature in SIGNATURES.items()],
        port=None,
    )
    yield reverb.Client(f"localhost:{server.port}")
    server.stop()


@pytest.fixture
def tables(client):
    for name in SIGNATURES:
        client.reset(name)
    return client


def read(client, table):
    size = client.server_info()[table].current_size
    if size == 0:
        return []
    return [s.data for s in client.sample(table, size, emit_timesteps=False, unpack_as_table_signature=True)]


def obs(t):
    return np.array([t, -t], F32)


def nstep(client, table, n=3, gamma=0.5, **kwargs):
    return NStepTransitionAdder(client=client, table_names=table, n_step=n, discount=gamma, **kwargs)


# Issue 14, case 1: discounts that broadcast against the reward, in every window (the tail's one-step ones too).


def test_scalar_reward_with_pair_discount_writes_broadcast_rewards_at_the_episode_tail(tables):
    adder = nstep(tables, "scalar_reward_pair_discount")
    adder.add_first(dm_env.restart(obs(0)))
    adder.add(np.int32(0), dm_env.transition(1.0, obs(1), [1.0, 0.5]))  # a list of numbers for the array
    adder.add(np.int32(1), dm_env.termination(2.0, obs(2)))  # dm_env's scalar 0.0 fills the discount's [2]
    items = read(tables, "scalar_reward_pair_discount")
    assert [item.reward.tolist() for item in items] == [[1 + 0.5 * 2, 1 + 0.5 * 0.5 * 2], [2.0, 2.0]]
    assert [item.discount.tolist() for item in items] == [[0.0, 0.0], [0.0, 0.0]]


def test_nested_reward_with_pair_discount(tables):
    adder = nstep(tables, "nested_reward_pair_discount", n=2, gamma=1.0)
    adder.add_first(dm_env.restart(obs(0)))
    adder.add(np.int32(0), dm_env.transition({"a": 1.0, "b": np.array([1.0, 2.0])}, obs(1), np.array([1.0, 0.5])))
    adder.add(np.int32(1), dm_env.truncation({"a": 4.0, "b": np.array([4.0, 4.0])}, obs(2), np.array([0.5, 1.0])))
    first, last = read(tables, "nested_reward_pair_discount")
    assert first.reward["a"].tolist() == [5.0, 3.0] and first.reward["b"].tolist() == [5.0, 4.0]
    assert first.discount.tolist() == [0.5, 0.5]
    assert last.reward["a"].tolist() == [4.0, 4.0] and last.discount.tolist() == [0.5, 1.0]


def test_signature_broadcasts_reward_against_discount():
    signature = NStepTransitionAdder.signature(env(SCALAR, PAIR))
    assert signature.reward.shape == (2,) and signature.discount.shape == (2,)
    with pytest.raises(ValueError, match=r"shape \(3,\) does not broadcast against its discount of shape \(2,\)"):
        NStepTransitionAdder.signature(env(specs.Array((3,), F32), PAIR))


def test_table_built_without_broadcasting_is_rejected_at_add_first(tables):
    adder = nstep(tables, "old_style")
    with pytest.raises(ValueError, match=r"table 'old_style' does not fit n-step transitions.*NStepTransitionAdder"):
        adder.add_first(dm_env.restart(obs(0)))


# Issue 14, case 2: a padding function computing in another dtype.


def test_episode_padding_in_another_dtype_is_cast(tables):
    adder = EpisodeAdder(client=tables, table_names="episode_padded", max_sequence_length=5,
                         padding_fn=lambda shape, dtype: np.zeros(shape, dtype) - 1)  # float64/int64 for shape ()
    adder.add_first(dm_env.restart(obs(0)))
    adder.add(np.int32(7), dm_env.termination(1.0, obs(1)), {"logp": F32(-0.5)})
    (item,) = read(tables, "episode_padded")
    assert item.reward.dtype == F32 and item.reward.tolist() == [1.0, 0.0, -1.0, -1.0, -1.0]
    assert item.action.tolist() == [7, 0, -1, -1, -1] and item.extras["logp"].tolist() == [-0.5, 0, -1, -1, -1]
    assert item.start_of_episode.tolist() == [True, False, True, True, True]  # -1 cast to bool
    assert item.observation[2:].tolist() == [[-1.0, -1.0]] * 3


def test_padding_of_the_wrong_shape_names_the_field(tables):
    adder = EpisodeAdder(client=tables, table_names="episode_padded", max_sequence_length=5,
                         padding_fn=lambda shape, dtype: np.zeros((3,), dtype))
    adder.add_first(dm_env.restart(obs(0)))
    with pytest.raises(ValueError, match=r"padding_fn\(\(\), dtype\('int32'\)\) for action returned shape \(3,\), "
                       r"which does not broadcast to \(\)"):
        adder.add(np.int32(0), dm_env.termination(1.0, obs(1)), {"logp": F32(0)})
    with pytest.raises(ValueError, match="before add_first"):  # the episode was dropped
        adder.add(np.int32(1), dm_env.termination(1.0, obs(2)), {"logp": F32(0)})
    failing = EpisodeAdder(client=tables, table_names="episode_padded", max_sequence_length=5,
                           padding_fn=lambda shape, dtype: np.zeros(shape, dtype) - np.zeros(shape, dtype))
    failing.add_first(dm_env.restart(obs(0)))
    with pytest.raises(ValueError, match=r"padding_fn\(\(\), dtype\('bool'\)\) for start_of_episode failed: "):
        failing.add(np.int32(0), dm_env.termination(1.0, obs(1)), {"logp": F32(0)})  # numpy has no bool subtract
    assert read(tables, "episode_padded") == []


# Issue 14, case 3: nested discounts are supported.


def test_nested_discount_with_the_rewards_structure(tables):
    adder = nstep(tables, "nested_reward_nested_discount", n=2, gamma=0.5)
    adder.add_first(dm_env.restart(obs(0)))
    adder.add(np.int32(0), dm_env.transition({"a": 1.0, "b": np.ones(2)}, obs(1), {"a": 1.0, "b": 0.0}))
    adder.add(np.int32(1), dm_env.termination({"a": 2.0, "b": np.ones(2)}, obs(2)))
    first, last = read(tables, "nested_reward_nested_discount")
    assert float(first.reward["a"]) == 2.0 and first.reward["b"].tolist() == [1.0, 1.0]
    assert float(first.discount["a"]) == 0.0 and float(first.discount["b"]) == 0.0
    assert float(last.reward["a"]) == 2.0 and float(last.discount["a"]) == 0.0


def test_scalar_reward_with_nested_discount_gives_one_return_per_discount(tables):
    adder = nstep(tables, "scalar_reward_nested_discount", n=2, gamma=1.0)
    adder.add_first(dm_env.restart(obs(0)))
    adder.add(np.int32(0), dm_env.transition(1.0, obs(1), {"x": 0.5, "y": np.array([1.0, 0.0])}))
    adder.add(np.int32(1), dm_env.truncation(2.0, obs(2), {"x": 1.0, "y": np.array([1.0, 1.0])}))
    first, last = read(tables, "scalar_reward_nested_discount")
    assert float(first.reward["x"]) == 2.0 and first.reward["y"].tolist() == [3.0, 1.0]
    assert float(first.discount["x"]) == 0.5 and first.discount["y"].tolist() == [1.0, 0.0]
    assert float(last.reward["x"]) == 2.0 and last.reward["y"].tolist() == [2.0, 2.0]


def test_nested_discount_of_another_structure_is_rejected_clearly(tables):
    with pytest.raises(ValueError, match="a nested discount must have the reward's structure"):
        NStepTransitionAdder.signature(env(NESTED_REWARD, {"x": SCALAR, "y": SCALAR}))
    adder = nstep(tables, "unsigned")
    adder.add_first(dm_env.restart(obs(0)))
    with pytest.raises(InvalidStepError, match=r"add \(step 1 .*a nested discount must have the reward's structure"):
        adder.add(np.int32(0), dm_env.transition({"a": 1.0, "b": 2.0}, obs(1), {"x": 1.0, "y": 1.0}))


def test_sequence_adder_stores_nested_discounts(tables):
    adder = SequenceAdder(client=tables, table_names="sequence_nested_discount", sequence_length=3, period=3,
                          end_of_episode_behavior=EndBehavior.ZERO_PAD)
    adder.add_first(dm_env.restart(obs(0)))
    adder.add(np.int32(0), dm_env.transition({"a": 1.0, "b": np.ones(2)}, obs(1), {"a": 0.5, "b": np.ones(2)}))
    adder.add(np.int32(1), dm_env.termination({"a": 1.0, "b": np.ones(2)}, obs(2)))
    (item,) = read(tables, "sequence_nested_discount")
    assert item.discount["a"].tolist() == [0.5, 0.0, 0.0] and item.discount["b"].tolist() == [[1, 1], [0, 0], [0, 0]]


# A step that cannot be written, mid-episode.

BAD_STEPS = {
    "observation shape": (dict(observation=np.zeros(3, F32)), r"observation has shape \(3,\) and dtype float32, but "
                          r"the signature of table '\w+' expects shape \(2,\) and dtype float32"),
    "observation dtype": (dict(observation=np.zeros(2, np.float64)), r"observation has shape \(2,\) and dtype float64"
                          r".*expects shape \(2,\) and dtype float32.*lossless"),
    "action dtype": (dict(action=np.float32(1.0)), r"action has shape \(\) and dtype float32.*dtype int32"),
    "action value": (dict(action=2**40), r"action has a Python int \(1099511627776\).*does not convert to int32"),
    "extras structure": (dict(extras={"other": F32(0)}), r"extras has structure"),
    "NaN reward": (dict(reward=float("nan")), r"reward has a Python float \(nan\).*not finite"),
    "infinite discount": (dict(discount=np.float32("inf")), r"discount has shape \(\) and dtype float32.*not finite"),
    "reward shape": (dict(reward=np.ones(2, F32)), r"reward has shape \(2,\) and dtype float32.*expects shape \(\)"),
}


def make_adder(kind, client):
    if kind == "nstep":
        return nstep(client, "nstep", n=1, max_in_flight_items=5)  # items confirmed only in batches mid-episode
    if kind == "sequence":
        return SequenceAdder(client=client, table_names="sequence", sequence_length=2, period=1,
                             end_of_episode_behavior=EndBehavior.ZERO_PAD, max_in_flight_items=None)
    return EpisodeAdder(client=client, table_names="episode", max_sequence_length=20)


def good_step(t, **overrides):
    values = dict(action=np.int32(t), reward=F32(t), discount=F32(1.0), observation=obs(t + 1), extras={"logp": F32(t)})
    values.update(overrides)
    step = dm_env.transition(values["reward"], values["observation"], values["discount"])
    return values["action"], step, values["extras"]


@pytest.mark.parametrize("kind", ["nstep", "sequence", "episode"])
@pytest.mark.parametrize("bad", sorted(BAD_STEPS))
def test_bad_step_mid_episode_raises_a_named_error_and_keeps_earlier_items(tables, kind, bad):
    overrides, message = BAD_STEPS[bad]
    adder = make_adder(kind, tables)
    adder.add_first(dm_env.restart(obs(0)))
    for t in range(4):  # steps 1..4
        adder.add(*good_step(t))
    with pytest.raises(InvalidStepError, match=rf"{type(adder).__name__}\.add \(step 5 of the episode.*{message}"):
        adder.add(*good_step(4, **overrides))
    # Everything created before the bad step is in the table now, intact: n=1 transitions of starts 0..3, and
    # length-2 sequences over rows 0..3 (the episode adder writes only complete episodes).
    items = read(tables, kind)
    if kind == "nstep":
        assert [(item.observation.tolist(), int(item.action), float(item.reward)) for item in items] == [
            (obs(t).tolist(), t, float(t)) for t in range(4)
        ]
    elif kind == "sequence":
        assert [item.action.tolist() for item in items] == [[0, 1], [1, 2], [2, 3]]
    else:
        assert items == []
    # The episode was ended; the adder is ready for the next one.
    with pytest.raises(ValueError, match="before add_first"):
        adder.add(*good_step(5))
    adder.add_first(dm_env.restart(obs(10)))
    adder.add(np.int32(10), dm_env.termination(F32(1.0), obs(11)), {"logp": F32(0)})
    assert read(tables, kind)  # the next episode's items arrived


def test_bad_first_observation_is_step_zero_and_the_adder_stays_usable(tables):
    adder = nstep(tables, "nstep", n=1)
    with pytest.raises(InvalidStepError, match=r"add_first \(step 0 of the episode.*observation has shape \(2, 1\)"):
        adder.add_first(dm_env.restart(np.zeros((2, 1), F32)))
    adder.add_first(dm_env.restart(obs(0)))
    adder.add(np.int32(0), dm_env.termination(1.0, obs(1)), {"logp": F32(0)})
    assert len(read(tables, "nstep")) == 1


def test_without_a_signature_the_first_step_fixes_the_spec(tables):
    adder = nstep(tables, "unsigned", n=1)
    adder.add_first(dm_env.restart(obs(0)))
    adder.add(np.int32(0), dm_env.transition(1.0, obs(1)))
    with pytest.raises(InvalidStepError, match=r"step 2 .*observation has shape \(3,\).*first step of this adder"):
        adder.add(np.int32(1), dm_env.transition(1.0, np.zeros(3, F32)))


def test_unknown_table_is_named_at_add_first(tables):
    adder = nstep(tables, "no_such_table")
    with pytest.raises(ValueError, match=r"tables \['no_such_table'\] are not on the replay server"):
        adder.add_first(dm_env.restart(obs(0)))


# Lossless casts.


def test_lossless_casts_are_made_and_lossy_ones_refused(tables):
    adder = nstep(tables, "casts", n=1)
    observation = {"image": np.zeros((2, 2), np.uint8), "count": np.int32(3)}  # uint8 -> float32, int32 -> int64
    adder.add_first(dm_env.restart(observation))
    adder.add(5, dm_env.transition(np.float64(0.25), {"image": np.ones((2, 2), np.int16), "count": 4}))  # Python int
    adder.add(np.int16(6), dm_env.transition(True, {"image": np.ones((2, 2), F32), "count": np.uint8(5)}))
    adder.add(np.array(7), dm_env.termination(np.float16(0.5), {"image": np.ones((2, 2), F32), "count": 6}))  # int64 7
    first, second, third = read(tables, "casts")
    assert first.observation["image"].dtype == F32 and first.observation["count"].dtype == np.int64
    assert int(first.action) == 5 and float(first.reward) == 0.25 and float(second.reward) == 1.0
    assert int(third.action) == 7 and float(third.reward) == 0.5
    adder.add_first(dm_env.restart(observation))
    with pytest.raises(InvalidStepError, match=r"observation\['count'\] has a Python float \(4.0\).*int64 exactly"):
        adder.add(np.int32(0), dm_env.transition(0.0, {"image": np.ones((2, 2), F32), "count": 4.0}))
    adder.add_first(dm_env.restart(observation))
    with pytest.raises(InvalidStepError, match=r"action has shape \(\) and dtype int64.*expects .* dtype int32"):
        adder.add(np.int64(2**40), dm_env.transition(0.0, observation))
    adder.add_first(dm_env.restart(observation))
    with pytest.raises(InvalidStepError, match=r"observation\['image'\] has shape \(2, 2\) and dtype float64.*lossl"):
        adder.add(np.int32(0), dm_env.transition(0.0, {"image": np.ones((2, 2)), "count": 4}))


# Unusual but valid: none of these may raise.


def unusual_adder(kind, client, table):
    if kind == "nstep":
        return nstep(client, table, n=4, gamma=0.9, max_in_flight_items=0)
    if kind == "episode":
        return EpisodeAdder(client=client, table_names=[table], max_sequence_length=6, padding_fn=np.zeros)
    behavior = EndBehavior.TRUNCATE if kind == "truncate" else EndBehavior.WRITE
    return SequenceAdder(client=client, table_names=(table,), sequence_length=3, period=2,
                         end_of_episode_behavior=behavior, priority_fns={table: lambda step: 2.0})


def camera(t):  # alternately numpy, Python and JAX values
    if t % 3 == 0:
        return Camera(np.full((2, 2), t, np.uint8), np.bool_(t % 2))
    if t % 3 == 1:
        return Camera(jnp.full((2, 2), t, jnp.uint8), bool(t % 2))
    return Camera(np.full((2, 2), t, np.uint8), np.asarray(t % 2 == 1))


def unusual_action(t):
    return (t % 3 if t % 2 else np.array(t % 3), jnp.asarray([0.5, -0.5]) if t % 2 else np.zeros(2, F32))


def unusual_extras(t):
    return {"state": {"h": np.full(2, t, F32)}, "step": t if t % 2 else np.int32(t)}


@pytest.mark.parametrize("kind", sorted(UNUSUAL))
def test_unusual_but_valid_steps_are_written(tables, kind):
    table = f"unusual_{kind}"
    adder = unusual_adder(kind, tables, table)
    rewards = [np.array([1.0, 2.0]), [0.5, 0.5], jnp.ones(2), np.zeros(2, np.float16), (1, 2)]
    for length in (1, 2, 5):  # 1, shorter than n and the sequence length, longer than both
        adder.add_first(dm_env.restart(camera(0)))
        for t in range(length):
            reward, discount = rewards[t % len(rewards)], [1, 1.0, np.float64(0.5), np.int64(1), np.array(1.0)][t]
            if t == length - 1:
                step = dm_env.termination(reward, camera(t + 1)) if length != 2 else dm_env.truncation(
                    reward, camera(t + 1), discount)
            else:
                step = dm_env.transition(reward, camera(t + 1), discount)
            adder.add(unusual_action(t), step, unusual_extras(t))
    adder.add_first(dm_env.restart(camera(0)))  # add_first twice, reset mid-episode: nothing breaks
    adder.add_first(dm_env.restart(camera(0)))
    adder.add(unusual_action(0), dm_env.transition(np.ones(2), camera(1)), unusual_extras(0))
    adder.reset()
    adder.close()
    items = read(tables, table)
    assert items and all(item.observation.image.dtype == np.uint8 for item in items)
    again = unusual_adder(kind, tables, table)  # a new adder on the same table
    again.add_first(dm_env.restart(camera(0)))
    again.add(unusual_action(0), dm_env.termination(np.ones(2), camera(1)), unusual_extras(0))
    assert read(tables, table)


@pytest.mark.parametrize("kind", sorted(UNUSUAL))
def test_python_floats_and_empty_extras_for_float64_scalar_observations(tables, kind):
    table = f"float64_{kind}"
    adder = unusual_adder(kind, tables, table)
    for extras in ((), {}, None):
        adder.add_first(dm_env.restart(0.5))
        adder.add(np.int32(1), dm_env.transition(1, np.float32(1.5)), extras)  # float32 -> float64 is lossless
        adder.add(1, dm_env.termination(np.int64(2), np.float64(2.5)), extras)
    items = read(tables, table)
    assert items and all(np.asarray(item.observation).dtype == np.float64 for item in items)
