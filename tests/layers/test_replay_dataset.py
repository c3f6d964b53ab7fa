"""ReplayDataset and Prefetcher against a real in-process Reverb server: a wait past the rate limiter's timeout
drops nothing, `close()` lets go of a thread waiting on an empty table (and of the table's threads), and the
on-policy agents' pipeline samples little ahead of its learner."""

import gc
import os
import time

import numpy as np
import pytest
from stack import require

pytestmark = pytest.mark.classic
reverb = require("reverb")
tf = require("tensorflow")

from acmelike.replay import Prefetcher, ReplayDataset  # noqa: E402

TABLE = "queue"


def queue_server():
    table = reverb.Table.queue(TABLE, 100, signature=tf.TensorSpec((3,), tf.float32))
    return reverb.Server([table], port=None)


def insert(client, values):
    with client.trajectory_writer(num_keep_alive_refs=1) as writer:
        for v in values:
            writer.append(np.full(3, v, np.float32))
            writer.create_item(TABLE, 1.0, writer.history[-1])


def dataset(server, timeout_ms):
    return ReplayDataset(server_address=f"localhost:{server.port}", table=TABLE, batch_size=4, num_parallel_calls=1,
                         wait_timeout_ms=timeout_ms)


def test_a_batch_cut_short_by_the_timeout_is_completed_with_the_next_items_not_dropped():
    server = queue_server()
    client = reverb.Client(f"localhost:{server.port}")
    batches = Prefetcher(dataset(server, timeout_ms=100))
    insert(client, [0, 1])
    time.sleep(1.0)  # the pipeline times out (and is rebuilt) several times holding items 0 and 1
    insert(client, range(2, 8))
    first, second = next(batches), next(batches)
    np.testing.assert_array_equal(first.data[:, 0], [0, 1, 2, 3])  # a queue hands out each item once, in order
    np.testing.assert_array_equal(second.data[:, 0], [4, 5, 6, 7])
    assert len(first.info.key) == 4 and len(set(first.info.key) | set(second.info.key)) == 8
    batches.close(timeout=5)
    server.stop()


def _os_threads() -> int:
    return len(os.listdir("/proc/self/task"))


def _waiting_prefetcher_closed(wrap=lambda batches: batches):
    server = queue_server()
    batches = Prefetcher(wrap(dataset(server, timeout_ms=200)))
    time.sleep(0.3)  # the prefetch thread now waits on the empty queue
    assert not batches.ready()
    batches.close(timeout=5)
    alive = batches._thread.is_alive()
    server.stop()
    del batches, server
    gc.collect()
    return alive


def test_close_ends_the_thread_waiting_on_an_empty_table_and_frees_the_tables_threads():
    assert not _waiting_prefetcher_closed()  # warms up TensorFlow's own thread pools too
    time.sleep(0.5)
    before = _os_threads()
    for _ in range(3):
        assert not _waiting_prefetcher_closed()
    time.sleep(0.5)
    # Left waiting, each cycle kept ~40 threads of the table and its sampler alive (measured: 50, 88, 126).
    assert _os_threads() <= before + 5, (before, _os_threads())


def test_close_reaches_the_dataset_through_a_batched_runs_unbatching():
    """With --num-envs K the learner's dataset is an `UnbatchedIterator` over the `ReplayDataset`. Before it
    passed `close()` on, a prefetch thread waiting on the rate limiter at the end of a run outlived it, and each
    batched run's end waited out the runner's 5 s join."""
    from acmelike.adders.batched import UnbatchedIterator

    assert not _waiting_prefetcher_closed(lambda batches: UnbatchedIterator(batches, items_per_write=4, batch_size=4))


def _sampled_ahead_of_the_learner(batches, client, inserted: int, batch_size: int) -> int:
    next(batches)  # the learner takes one batch
    time.sleep(1.0)  # the pipeline fills every buffer it has
    left = client.server_info()[TABLE].current_size
    return inserted - left - batch_size


def test_an_on_policy_learner_samples_little_ahead_of_itself():
    """Every item a queue hands out before the learner uses it was acted with older parameters. The on-policy
    builders' pipeline (one worker, one batch in flight, one prefetched) keeps that lag to a few batches; Reverb's
    default pipeline (4 workers with 2 batches in flight each, 2 prefetched) emptied this queue."""
    from launch.experiments.parts import AgentParts
    from launch.experiments.make import make_experiment_config

    server = queue_server()
    client = reverb.Client(f"localhost:{server.port}")
    insert(client, range(80))
    # IMPALA's learner dataset as the single-process runner and the learner node build it.
    config = make_experiment_config(agent="impala", environment="CartPole-v1", max_num_actor_steps=1,
                                    config_overrides=("batch_size=4", f"replay_table_name={TABLE}"))
    batches = AgentParts(config).prefetched_dataset(client)
    ahead = _sampled_ahead_of_the_learner(batches, client, 80, 4)
    batches.close(timeout=5)
    # At most 5 batches: the prefetch buffer, the batch its thread holds, tf.data's prefetched batch, the batch
    # being assembled, and the items in flight. Measured: 16 items here, 60 with Reverb's default pipeline.
    assert ahead <= 5 * 4, ahead

    default = Prefetcher(ReplayDataset(server_address=f"localhost:{server.port}", table=TABLE, batch_size=4))
    insert(client, range(80 - client.server_info()[TABLE].current_size))  # refill to 80
    default_ahead = _sampled_ahead_of_the_learner(default, client, 80, 4)
    default.close(timeout=5)
    server.stop()
    assert default_ahead > 2 * ahead, (default_ahead, ahead)


def test_ready_says_when_next_returns_without_waiting_and_close_lets_go_of_the_pipeline():
    """A single-threaded loop steps its learner while `ready()`: with a uniform table that allows two samples per
    insert after 4 items, `ready()` turns True only once the table can serve a batch beyond what the pipeline has
    taken, and `next()` then returns at once."""
    limiter = reverb.rate_limiters.SampleToInsertRatio(samples_per_insert=2.0, min_size_to_sample=4,
                                                       error_buffer=(0.0, 1e9))
    table = reverb.Table("uniform", reverb.selectors.Uniform(), reverb.selectors.Fifo(), 100, limiter,
                         signature=tf.TensorSpec((3,), tf.float32))
    server = reverb.Server([table], port=None)
    client = reverb.Client(f"localhost:{server.port}")
    batches = ReplayDataset(server_address=f"localhost:{server.port}", table="uniform", batch_size=4,
                            num_parallel_calls=1, prefetch_batches=1)
    with client.trajectory_writer(num_keep_alive_refs=1) as writer:
        for v in range(3):
            writer.append(np.full(3, v, np.float32))
            writer.create_item("uniform", 1.0, writer.history[-1])
    time.sleep(0.3)
    assert not batches.ready()  # below min_size_to_sample
    with client.trajectory_writer(num_keep_alive_refs=1) as writer:
        for v in range(3, 40):
            writer.append(np.full(3, v, np.float32))
            writer.create_item("uniform", 1.0, writer.history[-1])
    deadline = time.time() + 10
    while not batches.ready() and time.time() < deadline:  # the pipeline fills its buffers first
        time.sleep(0.05)
    assert batches.ready()
    started = time.time()
    sample = next(batches)
    assert len(sample.info.key) == 4 and time.time() - started < 1.0
    batches.close()
    assert not batches.ready() and batches._numpy is None  # TensorFlow's iterator is let go of before exit
    with pytest.raises(StopIteration):
        next(batches)
    server.stop()
