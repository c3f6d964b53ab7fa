"""LocalReplay (acmelike.replay.local): seeded sampling, Reverb's rate limiting and selectors, the writer, saving.

Tables come from the `acmelike.replay` factories, as builders make them. Where Reverb's behaviour is the reference
(rate limiter verdicts, queue order, items written by the BatchedAdder), the same descriptions also run as
`reverb.Table`s (`to_reverb_table`) in a real in-process reverb.Server: those tests need the full stack, the rest
runs without Reverb or TensorFlow. Statistical checks use fixed seeds, so they are deterministic.
"""

import json
import os
import shutil

import dm_env
import jax
import numpy as np
import pytest
from dm_env import specs
from stack import require

from acmelike.adders import NStepTransitionAdder
from acmelike.adders.batched import BatchedAdder, batched_tables
from acmelike.replay import (
    ArraySpec,
    TableSpec,
    min_size,
    never_blocking_inserts,
    prioritized_table,
    queue_table,
    sample_to_insert_ratio,
    uniform_table,
)
from acmelike.replay.local import LocalDataset, LocalReplay, ReplayWouldBlock
from acmelike.specs import EnvironmentSpec

SIGNATURE = {"x": ArraySpec((2,), np.float32), "i": ArraySpec((), np.int32)}


def reverb_tables(tables):
    """The Reverb backend's tables of these descriptions, and the `reverb` module (the test skips without it)."""
    reverb = require("reverb")
    from acmelike.replay.reverb_tables import to_reverb_table

    return reverb, [to_reverb_table(table) for table in tables]


def item(i):
    return {"x": np.array([i, -i], np.float32), "i": np.int32(i)}


def ratio(samples_per_insert=1.0, min_size=1, error_buffer=1e9):
    return sample_to_insert_ratio(samples_per_insert=samples_per_insert, min_size_to_sample=min_size,
                                  error_buffer=error_buffer)


def uniform(name="uniform", max_size=1000, **limits):
    return uniform_table(name=name, max_size=max_size, rate_limiter=ratio(**limits), signature=SIGNATURE)


def prioritized(name="prioritized", exponent=1.0, max_size=1000, **limits):
    return prioritized_table(name=name, max_size=max_size, priority_exponent=exponent, rate_limiter=ratio(**limits),
                             signature=SIGNATURE)


def filled(tables, count=50, seed=0):
    replay = LocalReplay(tables, seed=seed)
    for name in replay.table_names:
        for i in range(count):
            replay.table(name).insert(item(i), priority=1.0 + i % 7)
    return replay


def draws(replay, name, batches=5, batch_size=8):
    return [replay.table(name).sample(batch_size) for _ in range(batches)]


def assert_same_samples(a, b):
    for x, y in zip(jax.tree_util.tree_leaves(a), jax.tree_util.tree_leaves(b), strict=True):
        np.testing.assert_array_equal(x, y)


# Seeding ---------------------------------------------------------------------------------------------------


def test_same_seed_same_samples_and_other_seeds_or_tables_differ():
    tables = [uniform(), prioritized(), uniform("uniform_b")]
    first, second, other = filled(tables, seed=3), filled(tables, seed=3), filled(tables, seed=4)
    for name in ("uniform", "prioritized"):
        assert_same_samples(draws(first, name), draws(second, name))
        assert not np.array_equal(draws(first, name)[0].info.key, draws(other, name)[0].info.key)
    # Two tables with the same items and seed draw different streams: each generator depends on the name.
    assert not np.array_equal(draws(first, "uniform")[0].info.key, draws(first, "uniform_b")[0].info.key)


# Selectors -------------------------------------------------------------------------------------------------


def chi_square(counts, probabilities):
    expected = probabilities * counts.sum()
    return float(((counts - expected) ** 2 / expected).sum())


def test_uniform_sampling_frequencies_and_sample_fields():
    replay = filled([uniform()], count=10)
    sample = replay.table("uniform").sample(20_000)
    assert sample.info.key.dtype == np.uint64 and sample.info.probability.dtype == np.float64
    assert sample.info.table_size.dtype == np.int64 and set(sample.info.table_size.tolist()) == {10}
    np.testing.assert_array_equal(sample.info.probability, 0.1)
    assert sample.data["x"].shape == (20_000, 2) and sample.data["i"].dtype == np.int32
    np.testing.assert_array_equal(sample.data["x"][:, 0], sample.data["i"])  # each row is one item
    counts = np.bincount(sample.data["i"], minlength=10)
    assert chi_square(counts, np.full(10, 0.1)) < 30  # 9 degrees of freedom: p < 1e-3 for a fair sampler


def test_prioritized_probabilities_follow_priorities_and_mutations():
    table = LocalReplay([prioritized(exponent=0.5)], seed=0).table("prioritized")
    keys = [table.insert(item(i), priority=p) for i, p in enumerate([1.0, 4.0, 9.0, 16.0])]
    sample = table.sample(20_000)
    want = np.array([1.0, 2.0, 3.0, 4.0]) / 10  # priority ** 0.5, normalised
    np.testing.assert_allclose(sample.info.probability, want[sample.data["i"]])
    assert chi_square(np.bincount(sample.data["i"], minlength=4), want) < 25  # 3 degrees of freedom

    # Priority 0 is never sampled; a key no longer in the table is ignored, as in Reverb.
    table.mutate_priorities({keys[0]: 0.0, keys[3]: 1.0, 123456789: 5.0})
    sample = table.sample(5_000)
    want = np.array([0.0, 2.0, 3.0, 1.0]) / 6
    assert 0 not in sample.data["i"]
    np.testing.assert_allclose(sample.info.probability, want[sample.data["i"]])
    with pytest.raises(ValueError, match="priorities must be >= 0"):
        table.mutate_priorities({keys[1]: -1.0})
    with pytest.raises(ValueError, match="priorities must be >= 0"):
        table.insert(item(9), priority=float("nan"))


def test_prioritized_exponent_zero_is_uniform_and_all_zero_priorities_uniform():
    table = LocalReplay([prioritized(exponent=0.0)], seed=0).table("prioritized")
    keys = [table.insert(item(i), priority=p) for i, p in enumerate([1.0, 50.0, 0.0])]
    sample = table.sample(2_000)
    assert set(sample.data["i"].tolist()) == {0, 1}  # priority 0 has probability 0 even with exponent 0
    np.testing.assert_allclose(sample.info.probability, 0.5)
    table.mutate_priorities({key: 0.0 for key in keys})
    np.testing.assert_allclose(table.sample(10).info.probability, 1 / 3)


def test_client_api_server_info_and_reset():
    replay = filled([prioritized(min_size=2)], count=3)
    info = replay.server_info(timeout=1)["prioritized"]
    assert info.name == "prioritized" and info.current_size == 3 and info.max_size == 1000
    assert info.signature == SIGNATURE
    keys = replay.table("prioritized").sample(3).info.key.tolist()
    replay.mutate_priorities("prioritized", updates={keys[0]: 2.0}, deletes=keys[1:2])
    assert replay.server_info()["prioritized"].current_size == 2
    replay.reset("prioritized")
    assert replay.table("prioritized").size == 0 and not replay.table("prioritized").can_sample(1)


# Rate limiting and queues, against Reverb ------------------------------------------------------------------


@pytest.mark.classic
def test_rate_limiter_verdicts_match_reverb():
    """The same factories' tables in a reverb.Server and a LocalReplay, driven through the same random sequence of
    inserts and samples (each only when allowed): can_insert and can_sample agree after every step."""
    tables = never_blocking_inserts([
        uniform("ratio_never", max_size=6, samples_per_insert=2.0, min_size=3, error_buffer=3.0),
        queue_table(name="queue_never", max_size=4, signature=SIGNATURE)])
    tables += [uniform("ratio_may", max_size=6, samples_per_insert=2.0, min_size=3, error_buffer=3.0),
               queue_table(name="queue_may", max_size=4, signature=SIGNATURE)]
    replay = LocalReplay(tables, seed=0)
    reverb, references = reverb_tables(tables)
    server = reverb.Server(references, port=None)
    try:
        client = reverb.Client(f"localhost:{server.port}")
        writer = client.trajectory_writer(num_keep_alive_refs=1)
        rng = np.random.default_rng(0)
        for reference in references:
            local, name, queue = replay.table(reference.name), reference.name, "queue" in reference.name
            verdicts = set()
            for step in range(60):
                if rng.random() < 0.5:
                    assert local.can_insert(1) == reference.can_insert(1), (name, step)
                    if reference.can_insert(1):
                        writer.append(item(step))
                        writer.create_item(name, 1.0, jax.tree_util.tree_map(lambda c: c[-1], writer.history))
                        writer.flush()
                        local.insert(item(step), 1.0)
                    else:
                        with pytest.raises(ReplayWouldBlock, match="holds this insert back"):
                            local.insert(item(step), 1.0)
                elif reference.can_sample(1):
                    ours = local.sample(1)
                    theirs = next(client.sample(name, 1, emit_timesteps=False, unpack_as_table_signature=True))
                    if queue:  # deterministic: the same item, in insertion order
                        assert int(ours.data["i"][0]) == int(theirs.data["i"]) and ours.info.table_size[0] == \
                            theirs.info.table_size
                assert local.size == client.server_info()[name].current_size, (name, step)
                for k in (1, 2, 3):
                    # Reverb's limiter can allow k samples of a queue that evicted items it no longer holds.
                    expected = reference.can_sample(k) and (k <= local.size or not queue)
                    assert local.can_sample(k) == expected, (name, step, k)
                    verdicts.add(expected)
                assert local.can_insert(2) == reference.can_insert(2), (name, step)
            assert verdicts == {True, False}, name  # the sequence went through both sides of the limiter
        writer.close()  # an open writer stream would make server.stop() wait out its deadline
    finally:
        server.stop()


def test_queue_hands_out_each_item_once_in_order_and_evicts_the_oldest():
    replay = LocalReplay(never_blocking_inserts([queue_table(name="q", max_size=3, signature=SIGNATURE)]), seed=0)
    table = replay.table("q")
    for i in range(5):  # the limiter never holds inserts back here: the oldest items make room
        table.insert(item(i), 1.0)
    assert table.size == 3 and not table.can_sample(4)
    sample = table.sample(3)
    assert sample.data["i"].tolist() == [2, 3, 4] and sample.info.table_size.tolist() == [3, 2, 1]
    assert table.size == 0 and not table.can_sample(1)
    with pytest.raises(ReplayWouldBlock, match="'q' cannot serve 1 samples now: the table is empty"):
        table.sample(1)

    blocking = LocalReplay([queue_table(name="q", max_size=2, signature=SIGNATURE)], seed=0).table("q")
    blocking.insert(item(0), 1.0)
    blocking.insert(item(1), 1.0)
    assert not blocking.can_insert(1)
    with pytest.raises(ReplayWouldBlock, match="never_blocking_inserts"):
        blocking.insert(item(2), 1.0)
    assert blocking.sample(1).data["i"].tolist() == [0] and blocking.can_insert(1)


def test_uniform_table_evicts_oldest_at_max_size_and_limits_sampling():
    table = LocalReplay(never_blocking_inserts([uniform(max_size=3, min_size=2, samples_per_insert=1.0,
                                                        error_buffer=1.0)]), seed=0).table("uniform")
    table.insert(item(0), 1.0)
    with pytest.raises(ReplayWouldBlock, match="fewer than min_size_to_sample=2"):
        table.sample(1)
    for i in range(1, 5):
        table.insert(item(i), 1.0)
    assert table.size == 3
    # inserts * 1.0 - samples - k >= min_diff = 2 - 1: five inserts allow four samples.
    assert table.can_sample(4) and not table.can_sample(5)
    assert set(table.sample(4).data["i"].tolist()) <= {2, 3, 4}
    with pytest.raises(ReplayWouldBlock, match="holds sampling back until more items are inserted"):
        table.sample(1)


def test_items_leave_after_max_times_sampled():
    table = LocalReplay([TableSpec(name="twice", sampler="uniform", max_size=10, max_times_sampled=2,
                                   rate_limiter=min_size(1), signature=SIGNATURE)], seed=0).table("twice")
    for i in range(3):
        table.insert(item(i), 1.0)
    assert table.can_sample(6) and not table.can_sample(7)  # three items, two samples each
    sample = table.sample(6)
    assert sorted(sample.data["i"].tolist()) == [0, 0, 1, 1, 2, 2] and table.size == 0
    assert sample.info.table_size[-1] == 1 and sample.info.probability[-1] == 1.0  # the last draw had one left


# Datasets --------------------------------------------------------------------------------------------------


def test_local_dataset_samples_when_ready_and_says_why_not():
    replay = LocalReplay([uniform(min_size=4)], seed=0)
    dataset = LocalDataset(replay, "uniform", batch_size=2)
    assert dataset.samples_per_next == {"uniform": 2} and not dataset.ready()
    replay.table("uniform").insert(item(0), 1.0)
    with pytest.raises(ReplayWouldBlock, match=r"fewer than min_size_to_sample=4.*only when ready\(\) is True"):
        next(dataset)
    for i in range(1, 4):
        replay.table("uniform").insert(item(i), 1.0)
    assert dataset.ready() and next(dataset).data["x"].shape == (2, 2)
    dataset.close()


# The writer ------------------------------------------------------------------------------------------------


def test_writer_history_windows_missing_fields_and_partial_steps():
    replay = LocalReplay([queue_table(name="q", max_size=10, signature=None)], seed=0)
    writer = replay.trajectory_writer(num_keep_alive_refs=2)
    writer.append({"a": np.float32(0)})
    writer.append({"a": np.float32(1), "b": np.int32(10)})
    history = writer.history
    assert history["a"][-1].numpy() == 1 and history["a"][0:2].numpy().tolist() == [0, 1]
    with pytest.raises(ValueError, match="Row 0 of history column \\['b'\\] holds no data"):
        history["b"][0]
    writer.append({"a": np.float32(2)}, partial_step=True)
    writer.append({"b": np.int32(12)})
    with pytest.raises(ValueError, match="out of the writer's keep-alive window"):
        history["a"][0]
    writer.create_item("q", 1.0, {"a": history["a"][-2:], "b": history["b"][-1]})
    sample = replay.table("q").sample(1)
    assert sample.data["a"].tolist() == [[1, 2]] and sample.data["b"].tolist() == [12]
    writer.end_episode(clear_buffers=False)
    assert len(history["a"]) == 3
    writer.end_episode()
    assert len(history["a"]) == 0  # the columns are live: cleared in place
    writer.close()
    with pytest.raises(RuntimeError, match="closed writer"):
        writer.append({"a": np.float32(3)})


def test_items_must_fit_the_table_signature():
    replay = LocalReplay([uniform()], seed=0)
    writer = replay.trajectory_writer(num_keep_alive_refs=1)
    writer.append({"x": np.zeros(2, np.float64), "i": np.int32(0)})
    trajectory = jax.tree_util.tree_map(lambda column: column[-1], writer.history)
    with pytest.raises(ValueError, match=r"leaf \['x'\] should be float32 of shape \(2,\), got float64 of shape"):
        writer.create_item("uniform", 1.0, trajectory)
    with pytest.raises(ValueError, match="There is no table 'nope'"):
        writer.create_item("nope", 1.0, trajectory)
    assert replay.table("uniform").size == 0


SPEC = EnvironmentSpec(
    observations=specs.Array((2,), np.float32),
    actions=specs.Array((), np.int32),
    rewards=specs.Array((), np.float32),
    discounts=specs.BoundedArray((), np.float32, 0.0, 1.0),
)


def vector_timesteps(lengths, num_steps):
    """(actions, timestep) of sub-environments whose episodes last `lengths[i]` actions, each restarting (FIRST)
    on the step after its last one, as a vector environment does; the first element has no actions."""
    t, episode = [0] * len(lengths), [0] * len(lengths)

    def batch(step_types, rewards, discounts):
        observations = np.array([[t[i], 100 * episode[i] + i] for i in range(len(lengths))], np.float32)
        return dm_env.TimeStep(np.array(step_types, np.int8), np.array(rewards, np.float32),
                               np.array(discounts, np.float32), observations)

    stream = [(None, batch([dm_env.StepType.FIRST] * len(lengths), [0.0] * len(lengths), [1.0] * len(lengths)))]
    for _ in range(num_steps):
        actions = np.array([100 + t[i] for i in range(len(lengths))], np.int32)
        step_types, rewards, discounts = [], [], []
        for i, length in enumerate(lengths):
            if stream[-1][1].step_type[i] == dm_env.StepType.LAST:
                t[i], episode[i] = 0, episode[i] + 1
                step_types.append(dm_env.StepType.FIRST), rewards.append(0.0), discounts.append(1.0)
            else:
                t[i] += 1
                last = t[i] == length
                step_types.append(dm_env.StepType.LAST if last else dm_env.StepType.MID)
                rewards.append(float(t[i])), discounts.append(0.0 if last else 1.0)
        stream.append((actions, batch(step_types, rewards, discounts)))
    return stream


@pytest.mark.classic
def test_batched_adder_writes_the_items_it_writes_to_reverb():
    """BatchedAdder (2 sub-environments with staggered episodes, 2-step transitions) into both backends."""
    tables = batched_tables(
        [queue_table(name="batched", max_size=1000, signature=NStepTransitionAdder.signature(SPEC))], 2)
    stream = vector_timesteps(lengths=(3, 5), num_steps=14)

    def write(client):
        # No item in flight: Reverb's writer.close() cancels its stream, dropping items not yet confirmed.
        adder = BatchedAdder(client=client, num_envs=2, max_in_flight_items=0, make_adder=lambda sub_client: (
            NStepTransitionAdder(client=sub_client, table_names="batched", n_step=2, discount=0.9)))
        adder.add_first(stream[0][1])
        for actions, timestep in stream[1:]:
            adder.add(actions, timestep)
        adder.close()

    replay = LocalReplay(tables, seed=0)
    write(replay)
    ours = replay.table("batched").sample(replay.table("batched").size)
    reverb, references = reverb_tables(tables)
    server = reverb.Server(references, port=None)
    try:
        client = reverb.Client(f"localhost:{server.port}")
        write(client)
        size = client.server_info()["batched"].current_size
        theirs = [sample.data for sample in client.sample("batched", size, emit_timesteps=False,
                                                            unpack_as_table_signature=True)]
    finally:
        server.stop()
    assert len(theirs) == len(ours.info.key) >= 5
    for got, want in zip(jax.tree_util.tree_leaves(ours.data),
                         [np.stack(leaves) for leaves in zip(*map(jax.tree_util.tree_leaves, theirs))], strict=True):
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)


# Saving and restoring --------------------------------------------------------------------------------------


def restore_scenario():
    """A LocalReplay mid-run: prioritized (priorities mutated) and queue tables, some items sampled."""
    tables = never_blocking_inserts([
        prioritized(exponent=0.7, max_size=40, samples_per_insert=4.0, min_size=5, error_buffer=20.0),
        queue_table(name="queue", max_size=8, signature=SIGNATURE)])
    replay = LocalReplay(tables, seed=11)
    for i in range(60):  # evicts: the prioritized table holds 40, the queue 8
        for name in replay.table_names:
            replay.table(name).insert(item(i), priority=1.0 + i % 5)
    batch = replay.table("prioritized").sample(16)
    replay.mutate_priorities("prioritized", updates=dict(zip(batch.info.key.tolist(), np.linspace(0, 3, 16))))
    replay.table("queue").sample(3)
    return tables, replay


def go_on(replay):
    """What the replay does next: samples, inserts, more samples, and its limiters' verdicts."""
    out = [replay.table("prioritized").sample(8) for _ in range(3)] + [replay.table("queue").sample(2)]
    keys = [replay.table(name).insert(item(100), priority=2.0) for name in replay.table_names]
    out += [replay.table("prioritized").sample(8), replay.table("queue").sample(4), keys]
    out += [[replay.table(name).can_sample(k) for name in replay.table_names for k in (1, 8, 40)]]
    return out


def test_restore_continues_exactly_like_the_uninterrupted_replay(tmp_path):
    tables, replay = restore_scenario()
    replay.save(str(tmp_path))
    uninterrupted = go_on(replay)
    restored = LocalReplay(tables, seed=999)  # the saved generator state replaces the seed's
    restored.restore(str(tmp_path))
    assert_same_samples(go_on(restored), uninterrupted)


def test_checkpoint_directory_and_sizes():
    _, replay = restore_scenario()
    directory = replay.checkpoint()
    try:
        assert LocalReplay.checkpoint_sizes(directory) == {"prioritized": 40, "queue": 5}
        assert sorted(os.listdir(directory)) == ["local_replay.json", "local_replay.npz"]
    finally:
        shutil.rmtree(directory)


# Bad input -------------------------------------------------------------------------------------------------


def test_unsupported_selectors_are_named():
    with pytest.raises(ValueError, match="Table 'stack': the sampler must be one of .* got sampler 'lifo' and "
                                         "remover 'fifo'"):
        TableSpec(name="stack", sampler="lifo", max_size=5, rate_limiter=min_size(1))
    with pytest.raises(ValueError, match="Table 'heap': .* got sampler 'uniform' and remover 'heap'"):
        TableSpec(name="heap", sampler="uniform", remover="heap", max_size=5, rate_limiter=min_size(1))
    with pytest.raises(ValueError, match="seed must be a non-negative integer"):
        LocalReplay([], seed=-1)


def test_restore_names_a_missing_corrupt_or_mismatched_file(tmp_path):
    tables, replay = restore_scenario()
    with pytest.raises(ValueError, match="local_replay.json"):
        replay.restore(str(tmp_path))  # nothing saved there
    replay.save(str(tmp_path))
    before = go_on(restore_scenario()[1])

    arrays = tmp_path / "local_replay.npz"
    good = arrays.read_bytes()
    arrays.write_bytes(good[: len(good) // 2])
    with pytest.raises(ValueError, match="Cannot restore the replay from .*local_replay.npz"):
        replay.restore(str(tmp_path))
    arrays.write_bytes(good)

    state = tmp_path / "local_replay.json"
    meta = json.loads(state.read_text())
    state.write_text(state.read_text()[:50])
    with pytest.raises(ValueError, match="Cannot restore the replay from .*local_replay.json"):
        replay.restore(str(tmp_path))
    meta["tables"][0]["config"]["max_size"] = 41
    state.write_text(json.dumps(meta))
    with pytest.raises(ValueError, match="table 'prioritized': it was saved with max_size=41, but this table has "
                                         "max_size=40"):
        replay.restore(str(tmp_path))
    # A failed restore changes nothing.
    assert_same_samples(go_on(replay), before)

    smaller = LocalReplay([prioritized(max_size=40)], seed=0)
    with pytest.raises(ValueError, match=r"holds tables \['prioritized', 'queue'\]"):
        smaller.restore(str(tmp_path))
