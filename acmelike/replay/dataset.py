"""Dataset iterators: batches of numpy `ReplaySample`s out of a Reverb table (or a seeded in-process one)."""

from typing import Dict, Optional

import jax
import numpy as np

from acmelike.datasets import DatasetIterator
from acmelike.replay.local import LocalDataset, LocalReplay
from acmelike.replay.remote import RemoteDataset, RemoteReplay
from acmelike.types import ReplaySample, SampleInfo

# How long one sample request may wait on a table's rate limiter before the pipeline ends and is built again. A
# thread blocked in Reverb cannot be woken, so this is how soon a `close()`d dataset notices and lets go of the
# tables (an in-process sampler holds the table and its worker threads while it waits). Close it while the server
# still runs: a sampler waiting on a stopped server's table never times out.
WAIT_TIMEOUT_MS = 1_000


class ReplayDataset(DatasetIterator[ReplaySample]):
    """Yields `ReplaySample(info, data)` batches of `batch_size` items sampled from `table`.

    `info.key` holds the item keys a learner needs to update priorities. The data has the table's signature
    with a leading batch dimension. `next()` blocks while the table's rate limiter forbids sampling.

    `samples_per_next` says which table one `next()` samples and how many items it takes: a runner that acts and
    learns in one thread asks the tables whether they can serve that much before it waits on `next()`.

    `ready()` says whether `next()` returns without waiting on the rate limiter, so that one thread can act and
    learn (as with the local replay's `LocalDataset`): see there.

    `close()` lets a thread blocked in `next()` go within `wait_timeout_ms`: `next()` then raises StopIteration.
    It also lets go of the pipeline, so that TensorFlow's iterator is deleted while the interpreter still runs
    (at exit, its `__del__` would print a traceback): close the dataset before the Reverb server stops. Until then,
    a wait past `wait_timeout_ms` rebuilds the pipeline, and items it had already sampled (a part of a batch, which
    for a queue are gone from the table) start the next batch, so nothing sampled is dropped.

        dataset = make_dataset_iterator(client=reverb.Client(address), table="priority_table", batch_size=32)
        if dataset.ready():
            sample = next(dataset)   # ReplaySample: sample.data.observation has shape [32, ...]
        dataset.close()
    """

    def __init__(
        self,
        *,
        server_address: str,
        table: str,
        batch_size: int,
        max_in_flight_samples_per_worker: Optional[int] = None,
        num_parallel_calls: int = 4,
        prefetch_batches: int = 2,
        wait_timeout_ms: int = WAIT_TIMEOUT_MS,
    ):
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}.")
        self.table = table
        self.batch_size = batch_size
        import reverb  # lazy: a run with the local replay imports neither Reverb nor TensorFlow
        import tensorflow as tf

        in_flight = max_in_flight_samples_per_worker or 2 * batch_size

        def make_one(_):
            return reverb.TrajectoryDataset.from_table_signature(
                server_address=server_address, table=table, max_in_flight_samples_per_worker=in_flight,
                rate_limiter_timeout_ms=wait_timeout_ms,
            )

        # One stream per parallel call keeps the gRPC pipe busy; see Reverb's dataset docs. A timed-out pipeline
        # ends with a short batch (no drop_remainder): its items are kept, not dropped.
        self._dataset = tf.data.Dataset.range(num_parallel_calls).interleave(
            map_func=make_one, cycle_length=num_parallel_calls, num_parallel_calls=num_parallel_calls,
            deterministic=False,
        ).batch(batch_size).prefetch(prefetch_batches)
        self._numpy = self._dataset.as_numpy_iterator()
        self._client = reverb.Client(server_address)  # asks the table's rate limiter, for `ready()`
        self._partial = None  # items of a batch cut short by a timeout
        self._closed = False

    @property
    def samples_per_next(self) -> Dict[str, int]:
        return {self.table: self.batch_size}

    def ready(self) -> bool:
        """Whether `next()` returns without waiting on the rate limiter: the table can serve a whole batch beyond
        what this dataset has already sampled (its rate limiter's state, read from the server: one round trip).

        The pipeline's workers take every sample the rate limiter allows until its buffers are full, so this is
        True only once they are (a batch or more waits there) or the table allows a batch more: either way `next()`
        returns at once, or as soon as its workers fetch what the table allows. False after `close()`."""
        if self._closed:
            return False
        info = self._client.server_info()[self.table]
        limiter = info.rate_limiter_info
        inserts, samples = limiter.insert_stats.completed, limiter.sample_stats.completed
        if info.current_size < max(limiter.min_size_to_sample, 1):
            return False
        return inserts * limiter.samples_per_insert - samples - self.batch_size >= limiter.min_diff

    def close(self) -> None:
        """Ends this dataset: a `next()` waiting on the rate limiter returns (StopIteration) within the timeout,
        and the pipeline is let go of (deleted once no `next()` runs in it)."""
        self._closed = True
        self._numpy = self._dataset = None

    def __next__(self) -> ReplaySample:
        while True:
            numpy, dataset = self._numpy, self._dataset
            if self._closed or numpy is None:
                raise StopIteration
            try:
                sample = next(numpy)
            except StopIteration:  # a sample request waited past the timeout
                if self._closed or dataset is None:
                    raise
                self._numpy = dataset.as_numpy_iterator()
                continue
            if self._partial is not None:
                sample = jax.tree_util.tree_map(lambda *parts: np.concatenate(parts), self._partial, sample)
                self._partial = None
            size = len(sample.info.key)
            if size > self.batch_size:
                self._partial = jax.tree_util.tree_map(lambda x: x[self.batch_size:], sample)
                sample = jax.tree_util.tree_map(lambda x: x[:self.batch_size], sample)
            elif size < self.batch_size:
                self._partial = sample
                continue
            info = sample.info
            return ReplaySample(
                info=SampleInfo(key=info.key, probability=info.probability, table_size=info.table_size),
                data=sample.data,
            )


def make_dataset_iterator(
    *,
    client,
    table: str,
    batch_size: int,
    max_in_flight_samples_per_worker: Optional[int] = None,
    num_parallel_calls: int = 4,
    prefetch_batches: int = 2,
) -> DatasetIterator[ReplaySample]:
    """The learner's batches of `batch_size` items from `table`, behind whichever replay `client` is.

    A `reverb.Client` gives a `ReplayDataset` (see there; the pipeline arguments apply to it). A seeded in-process
    `LocalReplay` (acmelike.replay.local) gives its synchronous `LocalDataset`: the same batches, drawn with the
    replay's seeded generator at the moment `next()` is called. A `RemoteReplay` (a replay node serving the local
    tables, `acmelike.replay.remote`) gives a `RemoteDataset`, fetching whole batches.
    """
    if isinstance(client, LocalReplay):
        return LocalDataset(client, table, batch_size)
    if isinstance(client, RemoteReplay):
        return RemoteDataset(client, table, batch_size)
    return ReplayDataset(
        server_address=client.server_address,
        table=table,
        batch_size=batch_size,
        max_in_flight_samples_per_worker=max_in_flight_samples_per_worker,
        num_parallel_calls=num_parallel_calls,
        prefetch_batches=prefetch_batches,
    )
