"""DatasetIterator: the learner's dataset as runners rely on it (as Acme's `PrefetchingIterator` declares `ready()`)."""

import abc
from typing import Dict, Iterator, TypeVar

T = TypeVar("T")


class DatasetIterator(Iterator[T], abc.ABC):
    """An iterator of learner batches (`acmelike.types.ReplaySample`s, or a nest of them) that says, beside
    `next()`, what one `next()` takes and whether it would wait.

    What a builder's `make_dataset_iterator` returns (`acmelike.replay.make_dataset_iterator` builds one), and what
    every runner relies on:

      samples_per_next: {table: items} that one `next()` samples. A runner that acts and learns in one thread
        (`launch.engines.single_process.LearningActor`) asks the tables whether they can serve that much before it
        steps the learner; `launch.experiments.parts.AgentParts.dataset` sizes batched acting's groups with it.
      ready(): whether `next()` returns now, without waiting on a rate limiter, a server or a prefetch thread.
      close(): lets go of what the iterator holds (a pipeline, a thread); a `next()` waiting in another thread then
        ends (StopIteration). A run closes its learner's dataset at its end.

    Wrappers (`acmelike.replay.Prefetcher`, `acmelike.adders.batched.UnbatchedIterator`) are dataset iterators too,
    passing `samples_per_next` on and answering `ready()` for themselves.
    """

    @property
    @abc.abstractmethod
    def samples_per_next(self) -> Dict[str, int]:
        """{table: items} one `next()` samples."""

    @abc.abstractmethod
    def ready(self) -> bool:
        """Whether `next()` returns without waiting."""

    def close(self) -> None:
        """Lets go of what the iterator holds; by default it holds nothing."""

    def __iter__(self) -> "DatasetIterator[T]":
        return self

    @abc.abstractmethod
    def __next__(self) -> T:
        """The next batch."""
