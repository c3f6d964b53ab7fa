"""The Reverb adders against a real in-process reverb.Server: exact item contents, priorities, flushing, errors.

Every test runs twice: against a real in-process reverb.Server (full stack only) and against the same tables in a
seeded `LocalReplay` (acmelike.replay.local), whose writer must give the items Reverb gives.

Episodes are synthetic with known values: observation o_t = [t, 10 t + 100 e] in episode e, action a_t = 100 + t,
reward r_t = 2^t (received after a_t), extras {"logp": -t}. Tables are FIFO queues, so reading every item back
(`read_items`) returns them in insertion order, each exactly once.
"""

import subprocess
import sys
import threading
from types import SimpleNamespace

import dm_env
import jax
import numpy as np
import pytest
from dm_env import specs
from stack import require

from acmelike.adders import EndBehavior, EpisodeAdder, InvalidStepError, NStepTransitionAdder, SequenceAdder
from acmelike.adders import reverb_base
from acmelike.adders.batched import BatchedAdder
from acmelike.replay import TableSpec, min_size
from acmelike.replay.local import LocalReplay
from acmelike.specs import EnvironmentSpec

ENV_SPEC = EnvironmentSpec(
    observations=specs.Array((2,), np.float32),
    actions=specs.Array((), np.int32),
    rewards=specs.Array((), np.float32),
    discounts=specs.BoundedArray((), np.float32, 0.0, 1.0),
)
EXTRAS_SPEC = {"logp": specs.Array((), np.float32)}


def obs(t, episode=0):
    return np.array([t, 10 * t + 100 * episode], np.float32)


def action(t):
    return np.int32(100 + t)


def extras_at(t):
    return {"logp": np.float32(-t)}


def run_episode(adder, num_actions, *, end="termination", discounts=None, episode=0, with_extras=False, last=True):
    """Feeds one episode of `num_actions` actions; `discounts[t]` overrides d_t (default 1, 0 at termination)."""
    adder.add_first(dm_env.restart(obs(0, episode)))
    for t in range(num_actions):
        reward, ob = np.float32(2.0**t), obs(t + 1, episode)
        discount = 1.0 if discounts is None else discounts[t]
        if t == num_actions - 1 and last:
            step = dm_env.termination(reward, ob) if end == "termination" else dm_env.truncation(reward, ob, discount)
        else:
            step = dm_env.transition(reward, ob, discount)
        adder.add(action(t), step, extras_at(t) if with_extras else ())


NESTED_SPEC = ENV_SPEC._replace(
    observations={"pixels": specs.Array((2,), np.float32), "step": specs.Array((), np.int32)},
    rewards={"a": specs.Array((), np.float32), "b": specs.Array((2,), np.float32)},
)
# One server for the module: FIFO queues, so reading every item back returns them in insertion order, once each.
TABLE_SIGNATURES = {
    "nstep": lambda: NStepTransitionAdder.signature(ENV_SPEC),
    "unbuffered": lambda: NStepTransitionAdder.signature(ENV_SPEC),
    "nstep_extras": lambda: NStepTransitionAdder.signature(ENV_SPEC, EXTRAS_SPEC),
    "nstep_extras_b": lambda: NStepTransitionAdder.signature(ENV_SPEC, EXTRAS_SPEC),
    "nstep_nested": lambda: NStepTransitionAdder.signature(NESTED_SPEC),
    "sequence": lambda: SequenceAdder.signature(ENV_SPEC, EXTRAS_SPEC),
    "sequence_b": lambda: SequenceAdder.signature(ENV_SPEC, EXTRAS_SPEC),
    "episode": lambda: EpisodeAdder.signature(ENV_SPEC, EXTRAS_SPEC),
}


class Replay:
    """The module's replay: `client`, `tables[name]` (objects with `can_sample`), `reset(name)`."""

    def __init__(self, client, tables):
        self.client, self.tables = client, tables

    def reset(self, *names):
        for name in names or self.tables:
            self.client.reset(name)


@pytest.fixture(scope="module", params=[pytest.param("reverb", marks=pytest.mark.classic), "local"])
def server(request):
    tables = {
        name: TableSpec(name=name, sampler="fifo", max_size=1000, max_times_sampled=1, rate_limiter=min_size(1),
                        signature=signature())
        for name, signature in TABLE_SIGNATURES.items()
    }
    if request.param == "local":
        client = LocalReplay(list(tables.values()), seed=0)
        yield Replay(client, {name: client.table(name) for name in tables})
        return
    reverb = require("reverb")
    from acmelike.replay.reverb_tables import to_reverb_table

    tables = {name: to_reverb_table(table) for name, table in tables.items()}
    server = reverb.Server(list(tables.values()), port=None)
    yield Replay(reverb.Client(f"localhost:{server.port}"), tables)
    server.stop()


@pytest.fixture
def replay(server):
    server.reset()  # every table empty
    return server


def table_size(client, table):
    return client.server_info()[table].current_size


def read_items(client, table):
    """Every item of the table in insertion order, each with `.data` structured like the signature and
    `.info.priority` (Reverb's ReplaySamples, or the same read from a LocalReplay's queue)."""
    size = table_size(client, table)
    if size == 0:
        return []
    if isinstance(client, LocalReplay):  # one at a time: items may differ in length (TRUNCATE)
        local = client.table(table)
        priorities = local.state()[1]["priority"]  # in insertion order, as the queue hands the items out
        return [
            SimpleNamespace(info=SimpleNamespace(priority=float(priority)),
                            data=jax.tree_util.tree_map(lambda x: x[0], local.sample(1).data))
            for priority in priorities
        ]
    return list(client.sample(table, size, emit_timesteps=False, unpack_as_table_signature=True))


# NStepTransitionAdder ---------------------------------------------------------------------------------------


def transition_items(client, table="nstep"):
    return [
        (s.data.observation.tolist(), int(s.data.action), float(s.data.reward), float(s.data.discount),
         s.data.next_observation.tolist())
        for s in read_items(client, table)
    ]


def make_nstep(client, n, gamma=0.5, table_names=("nstep",), **kwargs):
    return NStepTransitionAdder(client=client, table_names=table_names, n_step=n, discount=gamma, **kwargs)


@pytest.mark.parametrize("end", ["termination", "truncation"])
def test_one_step_transitions(replay, end):
    client = replay.client
    run_episode(make_nstep(client, 1), 3, end=end)
    last_discount = 0.0 if end == "termination" else 0.5
    assert transition_items(client) == [
        (obs(0).tolist(), 100, 1.0, 0.5, obs(1).tolist()),
        (obs(1).tolist(), 101, 2.0, 0.5, obs(2).tolist()),
        (obs(2).tolist(), 102, 4.0, last_discount, obs(3).tolist()),
    ]


def test_one_step_transitions_over_consecutive_episodes(replay):
    # With n = 1 no window is cut short at the episode end; the final row must still be closed.
    client = replay.client
    adder = make_nstep(client, 1)
    run_episode(adder, 2, end="termination", episode=0)
    run_episode(adder, 1, end="truncation", episode=1)
    assert transition_items(client) == [
        (obs(0, 0).tolist(), 100, 1.0, 0.5, obs(1, 0).tolist()),
        (obs(1, 0).tolist(), 101, 2.0, 0.0, obs(2, 0).tolist()),
        (obs(0, 1).tolist(), 100, 1.0, 0.5, obs(1, 1).tolist()),
    ]


def test_three_step_transitions_terminated(replay):
    client = replay.client
    run_episode(make_nstep(client, 3), 4, end="termination")  # rewards 1 2 4 8, d = 1 1 1 0, gamma 0.5
    assert transition_items(client) == [
        (obs(0).tolist(), 100, 1 + 0.5 * 2 + 0.25 * 4, 0.125, obs(3).tolist()),
        (obs(1).tolist(), 101, 2 + 0.5 * 4 + 0.25 * 8, 0.0, obs(4).tolist()),
        (obs(2).tolist(), 102, 4 + 0.5 * 8, 0.0, obs(4).tolist()),
        (obs(3).tolist(), 103, 8.0, 0.0, obs(4).tolist()),
    ]


def test_three_step_transitions_truncated_with_env_discounts(replay):
    client = replay.client
    # d = 1, 0.5, 1, 1 (truncation): the env discount inside a window scales later rewards and the total.
    run_episode(make_nstep(client, 3), 4, end="truncation", discounts=[1.0, 0.5, 1.0, 1.0])
    assert transition_items(client) == [
        (obs(0).tolist(), 100, 1 + 0.5 * 2 + 0.25 * 0.5 * 4, 0.125 * 0.5, obs(3).tolist()),
        (obs(1).tolist(), 101, 2 + 0.5 * 0.5 * 4 + 0.25 * 0.5 * 8, 0.125 * 0.5, obs(4).tolist()),
        (obs(2).tolist(), 102, 4 + 0.5 * 8, 0.25, obs(4).tolist()),
        (obs(3).tolist(), 103, 8.0, 0.5, obs(4).tolist()),
    ]


def test_nstep_episode_shorter_than_n_and_consecutive_episodes(replay):
    client = replay.client
    adder = make_nstep(client, 3)
    run_episode(adder, 1, end="truncation", episode=0)
    run_episode(adder, 2, end="termination", episode=1)
    assert transition_items(client) == [
        (obs(0, 0).tolist(), 100, 1.0, 0.5, obs(1, 0).tolist()),
        (obs(0, 1).tolist(), 100, 1 + 0.5 * 2, 0.0, obs(2, 1).tolist()),
        (obs(1, 1).tolist(), 101, 2.0, 0.0, obs(2, 1).tolist()),
    ]


def test_nstep_extras_and_priorities(replay):
    client = replay.client
    priority = lambda transition: 10.0 * transition.reward + transition.extras["logp"]  # noqa: E731
    adder = make_nstep(client, 2, gamma=1.0, table_names=("nstep_extras", "nstep_extras_b"),
                       priority_fns={"nstep_extras": priority})
    run_episode(adder, 3, end="termination", with_extras=True)
    a, b = read_items(client, "nstep_extras"), read_items(client, "nstep_extras_b")
    assert [float(s.data.extras["logp"]) for s in a] == [0.0, -1.0, -2.0]
    assert [float(s.data.reward) for s in a] == [3.0, 6.0, 4.0]
    assert [s.info.priority for s in a] == [30.0, 59.0, 38.0]
    assert [s.info.priority for s in b] == [1.0, 1.0, 1.0]


def test_nstep_items_sampleable_before_episode_end(replay):
    client = replay.client
    adder = make_nstep(client, 1)  # max_in_flight_items=5 by default
    adder.add_first(dm_env.restart(obs(0)))
    for t in range(10):
        adder.add(action(t), dm_env.transition(np.float32(1.0), obs(t + 1)))
    assert table_size(client, "nstep") >= 10 - 5  # all but max_in_flight_items confirmed, mid-episode
    assert replay.tables["nstep"].can_sample(1)
    unbuffered = make_nstep(client, 1, table_names="unbuffered", max_in_flight_items=0)
    unbuffered.add_first(dm_env.restart(obs(0)))
    unbuffered.add(action(0), dm_env.transition(np.float32(1.0), obs(1)))
    assert table_size(client, "unbuffered") == 1  # confirmed before add returned


# SequenceAdder ----------------------------------------------------------------------------------------------


def episode_rows(num_actions, episode=0, *, end="termination"):
    """The rows a step adder writes for `run_episode(..., with_extras=True)`, as tuples of plain values."""
    rows = []
    for t in range(num_actions):
        discount = 0.0 if (t == num_actions - 1 and end == "termination") else 1.0
        rows.append((obs(t, episode).tolist(), 100 + t, 2.0**t, discount, t == 0, float(-t)))
    rows.append((obs(num_actions, episode).tolist(), 0, 0.0, 0.0, False, 0.0))
    return rows


ZERO = ([0.0, 0.0], 0, 0.0, 0.0, False, 0.0)


def step_items(client, table="sequence"):
    """Each item as a list of row tuples (same layout as `episode_rows`)."""
    items = []
    for sample in read_items(client, table):
        s = sample.data
        items.append([
            (s.observation[i].tolist(), int(s.action[i]), float(s.reward[i]), float(s.discount[i]),
             bool(s.start_of_episode[i]), float(s.extras["logp"][i]))
            for i in range(len(s.action))
        ])
    return items


def make_sequence(client, length, period, behavior, **kwargs):
    return SequenceAdder(
        client=client, table_names="sequence", sequence_length=length, period=period, end_of_episode_behavior=behavior,
        **kwargs,
    )


@pytest.mark.parametrize(
    "behavior, last_item",
    [
        (EndBehavior.WRITE, [3, 4, 5]),
        (EndBehavior.ZERO_PAD, [4, 5, None]),
        (EndBehavior.TRUNCATE, [4, 5]),
    ],
)
def test_sequence_end_behaviors(replay, behavior, last_item):
    # Rows 0..5 (5 actions + final row); length 3, period 2: items end after rows 3 and 5 (1-based), then the end.
    client = replay.client
    run_episode(make_sequence(client, 3, 2, behavior), 5, with_extras=True)
    rows = episode_rows(5)
    expected = [[rows[0], rows[1], rows[2]], [rows[2], rows[3], rows[4]]]
    expected.append([ZERO if i is None else rows[i] for i in last_item])
    assert step_items(client) == expected


def test_sequence_episode_ending_on_a_write_point_writes_no_extra_item(replay):
    for behavior in (EndBehavior.WRITE, EndBehavior.ZERO_PAD, EndBehavior.TRUNCATE):
        replay.reset("sequence")
        client = replay.client
        run_episode(make_sequence(client, 3, 2, behavior), 4, with_extras=True)  # 5 rows: writes at 3 and 5
        rows = episode_rows(4)
        assert step_items(client) == [rows[0:3], rows[2:5]], behavior


@pytest.mark.parametrize(
    "behavior, expected_last",
    [
        (EndBehavior.WRITE, [0, 1, 2, None, None]),  # Acme would drop this short episode
        (EndBehavior.ZERO_PAD, [0, 1, 2, None, None]),
        (EndBehavior.TRUNCATE, [0, 1, 2]),
    ],
)
def test_sequence_episode_shorter_than_length(replay, behavior, expected_last):
    client = replay.client
    run_episode(make_sequence(client, 5, 1, behavior), 2, end="truncation", with_extras=True)
    rows = episode_rows(2, end="truncation")
    assert step_items(client) == [[ZERO if i is None else rows[i] for i in expected_last]]


def test_sequence_period_one_overlaps_and_period_beyond_length_skips(replay):
    client = replay.client
    run_episode(make_sequence(client, 2, 1, EndBehavior.ZERO_PAD), 3, with_extras=True)
    rows = episode_rows(3)
    assert step_items(client) == [rows[0:2], rows[1:3], rows[2:4]]

    # Length 2, period 3: windows are rows [0, 2), [3, 5), ...; an episode of 3 rows (2 actions) leaves row 2 in
    # no window, so ZERO_PAD and TRUNCATE write nothing more, while WRITE writes the last 2 rows.
    for behavior, extra in [(EndBehavior.ZERO_PAD, []), (EndBehavior.TRUNCATE, []), (EndBehavior.WRITE, [[1, 2]])]:
        replay.reset("sequence")
        client = replay.client
        run_episode(make_sequence(client, 2, 3, behavior), 2, with_extras=True)
        rows = episode_rows(2)
        assert step_items(client) == [rows[0:2]] + [[rows[i] for i in item] for item in extra], behavior


def test_sequence_continue_spans_episodes(replay):
    client = replay.client
    adder = make_sequence(client, 3, 2, EndBehavior.CONTINUE)
    run_episode(adder, 5, episode=0, with_extras=True)  # rows 0..5
    run_episode(adder, 2, episode=1, with_extras=True)  # rows 6..8 of the stream
    stream = episode_rows(5, 0) + episode_rows(2, 1)
    assert stream[6][4] is True  # the next episode's first row starts an episode
    assert step_items(client) == [stream[0:3], stream[2:5], stream[4:7], stream[6:9]]


def test_sequence_priorities_and_sampleable_mid_episode(replay):
    client = replay.client
    adder = SequenceAdder(
        client=client, table_names=("sequence", "sequence_b"), sequence_length=2, period=1,
        end_of_episode_behavior=EndBehavior.WRITE, priority_fns={"sequence_b": lambda step: float(step.reward.sum())},
    )
    run_episode(adder, 6, with_extras=True, last=False)  # no last timestep yet
    assert table_size(client, "sequence") == 5  # max_in_flight_items=0 by default: every item confirmed
    assert replay.tables["sequence"].can_sample(1) and replay.tables["sequence_b"].can_sample(1)
    run_episode(adder, 1, episode=1, with_extras=True)  # add_first mid-episode drops the partial episode
    assert [s.info.priority for s in read_items(client, "sequence")] == [1.0] * 6
    # rows 0..5 of the cut episode: rewards 1 2 4 8 16 32; the new episode has rows (r=1, final 0).
    assert [s.info.priority for s in read_items(client, "sequence_b")] == [3.0, 6.0, 12.0, 24.0, 48.0, 1.0]


# EpisodeAdder -----------------------------------------------------------------------------------------------


def test_episode_adder_contents_padding_and_too_long(replay):
    client = replay.client
    adder = EpisodeAdder(client=client, table_names="episode", max_sequence_length=4)
    run_episode(adder, 2, episode=0, with_extras=True)
    run_episode(adder, 3, episode=1, end="truncation", with_extras=True)
    with pytest.raises(InvalidStepError, match=r"EpisodeAdder.add \(step 4 of the episode.*max_sequence_length=4"):
        run_episode(adder, 4, episode=2, with_extras=True)  # 5 rows
    run_episode(adder, 1, episode=3, with_extras=True)  # the adder recovers after the error
    assert step_items(client, "episode") == [
        episode_rows(2, 0), episode_rows(3, 1, end="truncation"), episode_rows(1, 3)
    ]

    padded = EpisodeAdder(client=client, table_names="episode", max_sequence_length=4, padding_fn=np.zeros)
    run_episode(padded, 1, with_extras=True)
    assert step_items(client, "episode") == [episode_rows(1) + [ZERO, ZERO]]


# Errors and imports -----------------------------------------------------------------------------------------


def test_errors_add_before_add_first_and_extras_change(replay):
    client = replay.client
    cases = [
        (lambda: make_nstep(client, 2, table_names="nstep_extras"), "nstep_extras"),
        (lambda: make_sequence(client, 2, 1, EndBehavior.ZERO_PAD), "sequence"),
        (lambda: EpisodeAdder(client=client, table_names="episode", max_sequence_length=10), "episode"),
    ]
    for make_adder, table in cases:
        adder = make_adder()
        with pytest.raises(ValueError, match="add was called before add_first"):
            adder.add(action(0), dm_env.transition(1.0, obs(1)))
        adder.add_first(dm_env.restart(obs(0)))
        adder.add(action(0), dm_env.transition(1.0, obs(1)), extras_at(0))
        with pytest.raises(InvalidStepError, match=r"add \(step 2 of the episode.*extras has structure"):
            adder.add(action(1), dm_env.transition(1.0, obs(2)), ())
        with pytest.raises(ValueError, match="before add_first"):  # the rejected step ended the episode
            adder.add(action(1), dm_env.termination(1.0, obs(2)), extras_at(1))
        adder.add_first(dm_env.restart(obs(0)))
        adder.add(action(0), dm_env.termination(1.0, obs(1)), extras_at(0))
        with pytest.raises(ValueError, match="before add_first"):  # after the last timestep
            adder.add(action(1), dm_env.transition(1.0, obs(2)), extras_at(1))
        assert table_size(client, table) > 0  # the episode itself was written
    with pytest.raises(ValueError, match="not in table_names"):
        NStepTransitionAdder(client=client, table_names="nstep", n_step=1, discount=0.9, priority_fns={"x": None})


class _StuckWriter:
    """A writer whose close waits for the server for ever (a stopped learner no longer drains its queue)."""

    def __init__(self):
        self.closes, self.released = 0, threading.Event()

    def close(self):
        self.closes += 1
        self.released.wait()


def _nstep_adder(client):
    return NStepTransitionAdder(client=client, table_names="t", n_step=1, discount=0.9)


@pytest.mark.parametrize(
    "make_adder",
    [_nstep_adder, lambda c: BatchedAdder(client=c, num_envs=2, make_adder=_nstep_adder)],
    ids=["nstep", "batched"],
)
def test_an_interrupted_adder_closes_without_waiting_for_ever(make_adder, monkeypatch):
    monkeypatch.setattr(reverb_base, "CLOSE_WAIT_AFTER_INTERRUPT_S", 0.2)
    writer = _StuckWriter()
    adder = make_adder(SimpleNamespace(trajectory_writer=lambda num_keep_alive_refs: writer))
    adder.interrupt()
    closing = threading.Thread(target=adder.close, daemon=True)
    closing.start()
    closing.join(5.0)
    assert not closing.is_alive(), "close() after interrupt() waited on the writer for ever"
    assert writer.closes == 1  # it did try to send what was pending
    writer.released.set()


def test_an_adder_that_was_not_interrupted_closes_its_writer_before_returning():
    writer = _StuckWriter()
    writer.released.set()
    _nstep_adder(SimpleNamespace(trajectory_writer=lambda num_keep_alive_refs: writer)).close()
    assert writer.closes == 1


def test_adder_modules_import_neither_tensorflow_nor_reverb():
    code = (
        "import sys, acmelike.adders.transition, acmelike.adders.sequence, acmelike.adders.episode\n"
        "print([m for m in ('tensorflow', 'reverb') if m in sys.modules])"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip().splitlines()[-1] == "[]"


def test_nstep_nested_observations_and_rewards(replay):
    client = replay.client  # its table has NESTED_SPEC's signature
    adder = make_nstep(client, 2, table_names="nstep_nested")
    observation = lambda t: {"pixels": obs(t), "step": np.int32(t)}  # noqa: E731
    adder.add_first(dm_env.restart(observation(0)))
    for t in range(2):
        reward = {"a": 1.0 + t, "b": np.array([10.0 * (t + 1), 100.0])}  # float64: stored as float32
        adder.add(action(t), dm_env.transition(reward, observation(t + 1), 1.0 if t == 0 else 0.0))
    adder.add(action(2), dm_env.termination({"a": 0.0, "b": np.zeros(2)}, observation(3)))
    first, *_ = read_items(client, "nstep_nested")
    assert first.data.observation["step"] == 0 and first.data.next_observation["step"] == 2
    assert first.data.next_observation["pixels"].tolist() == obs(2).tolist()
    assert float(first.data.reward["a"]) == 1 + 0.5 * 2
    assert first.data.reward["b"].tolist() == [10 + 0.5 * 20, 100 + 0.5 * 100]
    assert float(first.data.discount) == 0.0  # d_1 = 0 inside the window
