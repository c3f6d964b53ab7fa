"""LocalDataset: a LocalReplay table's batches, sampled synchronously (the single-process runner's dataset)."""

from typing import Dict, Optional

from acmelike.datasets import DatasetIterator

from acmelike.replay.local.replay import LocalReplay
from acmelike.replay.local.table import ReplayWouldBlock
from acmelike.types import ReplaySample


class LocalDataset(DatasetIterator[ReplaySample]):
    """Batches of `batch_size` items of one `LocalReplay` table, sampled at once by `next()`.

    `ready()` says whether `next()` can sample now (the single-process runner asks before every learner step);
    `next()` when it cannot raises `ReplayWouldBlock` instead of waiting.

        dataset = LocalDataset(replay, table="priority_table", batch_size=256)
        while dataset.ready():
            learner.step()          # its next(dataset) samples at once
    """

    def __init__(self, replay: LocalReplay, table: str, batch_size: int):
        if batch_size < 1:
            raise ValueError(f"LocalDataset: batch_size must be >= 1, got {batch_size}.")
        self.table = table
        self.batch_size = batch_size
        self._table = replay.table(table)

    @property
    def samples_per_next(self) -> Dict[str, int]:
        return {self.table: self.batch_size}

    def ready(self) -> bool:
        return self._table.can_sample(self.batch_size)

    def __next__(self) -> ReplaySample:
        if not self.ready():
            raise ReplayWouldBlock(
                f"LocalDataset: {self._table.why_cannot_sample(self.batch_size)} The single-process runner calls "
                f"next() only when ready() is True."
            )
        return self._table.sample(self.batch_size)

    def close(self, timeout: Optional[float] = None) -> None:
        """Nothing to release (the signature of `Prefetcher.close`, which this stands in for)."""
        del timeout
