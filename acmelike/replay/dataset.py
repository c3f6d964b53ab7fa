"""Dataset iterators: batches of numpy `ReplaySample`s out of a Reverb table."""

from typing import Dict, Iterator, Optional

import reverb
import tensorflow as tf

from acmelike.types import ReplaySample, SampleInfo


class ReplayDataset(Iterator[ReplaySample]):
    """Yields `ReplaySample(info, data)` batches of `batch_size` items sampled from `table`.

    `info.key` holds the item keys a learner needs to update priorities. The data has the table's signature
    with a leading batch dimension. `next()` blocks while the table's rate limiter forbids sampling.

    `samples_per_next` says which table one `next()` samples and how many items it takes: a runner that acts and
    learns in one thread asks the tables whether they can serve that much before it waits on `next()`.
    """

    def __init__(
        self,
        *,
        server_address: str,
        table: str,
        batch_size: int,
        max_in_flight_samples_per_worker: Optional[int] = None,
        num_parallel_calls: int = 4,
    ):
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}.")
        self.table = table
        self.batch_size = batch_size
        in_flight = max_in_flight_samples_per_worker or 2 * batch_size

        def make_one(_):
            return reverb.TrajectoryDataset.from_table_signature(
                server_address=server_address, table=table, max_in_flight_samples_per_worker=in_flight
            )

        # One stream per parallel call keeps the gRPC pipe busy; see Reverb's dataset docs.
        dataset = tf.data.Dataset.range(num_parallel_calls).interleave(
            map_func=make_one, cycle_length=num_parallel_calls, num_parallel_calls=num_parallel_calls,
            deterministic=False,
        )
        self._numpy = dataset.batch(batch_size, drop_remainder=True).prefetch(2).as_numpy_iterator()

    @property
    def samples_per_next(self) -> Dict[str, int]:
        return {self.table: self.batch_size}

    def __next__(self) -> ReplaySample:
        sample = next(self._numpy)
        info = sample.info
        return ReplaySample(
            info=SampleInfo(key=info.key, probability=info.probability, table_size=info.table_size), data=sample.data
        )


def make_dataset_iterator(
    *,
    server_address: str,
    table: str,
    batch_size: int,
    max_in_flight_samples_per_worker: Optional[int] = None,
    num_parallel_calls: int = 4,
) -> ReplayDataset:
    """A `ReplayDataset` over `table` (see there)."""
    return ReplayDataset(
        server_address=server_address,
        table=table,
        batch_size=batch_size,
        max_in_flight_samples_per_worker=max_in_flight_samples_per_worker,
        num_parallel_calls=num_parallel_calls,
    )
