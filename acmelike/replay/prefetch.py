"""Prefetcher: pulls batches on a background thread so the caller can ask, without blocking, whether one is ready."""

import queue
import threading
from typing import Dict, TypeVar

from acmelike.datasets import DatasetIterator

T = TypeVar("T")

_END = object()


class Prefetcher(DatasetIterator[T]):
    """Wraps a dataset iterator; a daemon thread keeps up to `buffer_size` of its batches ready.

    `ready()` tells whether `next()` would return at once. An exception raised by the wrapped iterator is
    re-raised by `next()` in the caller's thread, so failures are not lost on the background thread.

    `close()` ends the thread: it closes the wrapped iterator too (a `ReplayDataset` lets a wait on the rate limiter
    go within its timeout), so the thread lets go of the iterator and, with it,
    of the replay tables a sampler in this process holds. Close it before the Reverb server stops.

        batches = Prefetcher(make_dataset_iterator(client=client, table="queue", batch_size=8))
        if batches.ready():
            learner_step(next(batches))
        batches.close()
    """

    def __init__(self, iterator: DatasetIterator[T], buffer_size: int = 2):
        self._iterator = iterator
        self._buffer: queue.Queue = queue.Queue(maxsize=buffer_size)
        self._retrieved = 0
        self._closed = threading.Event()
        self._thread = threading.Thread(target=self._fill, name="acmelike-prefetch", daemon=True)
        self._thread.start()

    def _put(self, element) -> bool:
        """Waits for room in the buffer unless closed; returns whether `element` went in."""
        while not self._closed.is_set():
            try:
                self._buffer.put(element, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def _fill(self):
        try:
            for element in self._iterator:
                if not self._put(element):
                    return
        except BaseException as error:  # noqa: BLE001 - handed to the consumer thread
            self._put(error)
            return
        self._put(_END)

    def close(self, timeout: float = 0.0) -> None:
        """Stops prefetching; waits up to `timeout` seconds for the thread to end (it ends by itself)."""
        self._closed.set()
        self._iterator.close()
        self._thread.join(timeout)

    def ready(self) -> bool:
        return not self._buffer.empty()

    @property
    def samples_per_next(self) -> Dict[str, int]:
        """What the wrapped iterator samples per `next()` ({table: items})."""
        return self._iterator.samples_per_next

    @property
    def retrieved_elements(self) -> int:
        return self._retrieved

    def __next__(self) -> T:
        element = self._buffer.get()
        if element is _END:
            self._buffer.put(_END)
            raise StopIteration
        if isinstance(element, BaseException):
            self._buffer.put(element)
            raise element
        self._retrieved += 1
        return element
