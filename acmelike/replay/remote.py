"""The local replay's tables served to other processes, with Reverb's waits: a distributed program's replay node
where Reverb is not installed (Python 3.12+), or wherever its config asks for the local replay.

    server = ReplayServer(tables, seed=0)            # in the replay node's process; any thread may call it
    replay = RemoteReplay(handle)                    # in an actor's or the learner's process, over the engine's
                                                     # client of that node (`handle.method(...)` and
                                                     # `handle.futures.method(...)`, as Launchpad's and Ray's are)
    adder = builder.make_adder(replay_client=replay, ...)      # the same adders as on a LocalReplay
    dataset = builder.make_dataset_iterator(replay_client=replay)   # a RemoteDataset: whole batches

`ReplayServer` holds a `LocalReplay` (the same `LocalTable`s, samplers and rate limiters as a single-process run)
behind one lock and condition. Where a `LocalTable` raises `ReplayWouldBlock`, the server waits, as Reverb does: a
sample waits for data (and for the rate limiter), an insert waits while the rate limiter says the actors are too
far ahead. A sample request waits at most its `timeout_s` (an abandoned one takes nothing afterwards); an insert
waits until its items are in, or `close()`. Clients wait on their calls in short slices, so a caller that is
stopping sees its stop whatever the server does.

Calls are batched, since each costs a round trip between processes:
- an adder's writer (`RemoteTrajectoryWriter`, the in-memory `LocalTrajectoryWriter` with a sender) keeps one
  insert call in flight; the items finished meanwhile go out together in the next call, once `MAX_BATCH_ITEMS` are
  waiting or the oldest has waited `MAX_DELAY_S` (an episode's end or `close` sends at once). Items of one table
  and shape travel stacked, one array per leaf. The server inserts a call's items in order, each as soon as the
  rate limiter lets it, whether or not the caller is still alive. So a writer killed mid-insert loses only the items
  it had not sent yet (those finished in the last `MAX_DELAY_S`, or collected behind a call held back by the rate
  limiter), besides its unfinished item; whatever reached the server goes in.
- a `RemoteDataset` fetches whole batches and keeps one request ahead, so the next batch travels while the
  learner steps on this one.
- `mutate_priorities` goes out without waiting for the answer (one call in flight, so updates keep their order).

Checkpoints: `ReplayServer.checkpoint` saves in `LocalReplay`'s format into a new directory under
`staging_dir` (a directory the caller can move it from: `acmelike.checkpointing.Checkpointer` moves it into the
checkpoint it writes) and `ReplayServer.restore` loads one.
"""

import concurrent.futures
import os
import shutil
import tempfile
import threading
import time
from typing import Dict, List, Mapping, Optional, Sequence, Tuple

import numpy as np

from acmelike.datasets import DatasetIterator
from acmelike.replay.local.replay import LocalFormatReplay, LocalReplay
from acmelike.replay.local.table import TableInfo
from acmelike.replay.local.writer import LocalTrajectoryWriter
from acmelike.replay.tables import TableSpec
from acmelike.types import ReplaySample

MAX_BATCH_ITEMS = 32  # items an insert call carries at most; as many more may wait behind it
MAX_DELAY_S = 0.02  # how long a finished item may wait for the items that go with it
CALL_TIMEOUT_S = 0.5  # how long a sample request waits on the server before it answers None
_POLL_S = 0.05  # how often a client waiting on a call checks whether it should give up


class ReplayTimeout(TimeoutError):
    """A wait on the remote replay ran out (a `flush` slice); the adders retry it (`acmelike.adders.reverb_base.
    timed_out`), after checking whether they were interrupted."""


class ReplayClosed(RuntimeError):
    """The replay server was closed (its program is stopping) before it took a writer's items."""


class ReplayServer:
    """A `LocalReplay` for many threads and processes: inserts and samples wait as Reverb's do (see the module
    docstring). Methods are called by the engine's server threads; arguments and results are plain data.

    Args:
      tables: the builder's `TableSpec`s, with rate limiters that may hold inserts back.
      seed: the tables' seed (`LocalReplay`).
      staging_dir: where `checkpoint` writes; None: the system's temporary directory.
    """

    def __init__(self, tables: Sequence[TableSpec], *, seed: int, staging_dir: Optional[str] = None):
        self._replay = LocalReplay(tables, seed=seed)
        self._changed = threading.Condition()
        self._closed = False
        self._staging_dir = staging_dir
        if staging_dir:
            os.makedirs(staging_dir, exist_ok=True)

    def insert(self, groups: List[tuple]) -> int:
        """Inserts the items of `groups` in order, each once the rate limiter lets it in, and returns how many went
        in: all of them, unless the server was closed meanwhile. The call waits as long as the rate limiter says,
        whether or not its caller is still there: what reached the server is never lost.

        `groups`: (table, treedef, priorities [n], leaves: one array [n, ...] per leaf) for n items each."""
        inserted = 0
        with self._changed:
            for table_name, treedef, priorities, leaves in groups:
                table = self._replay.table(table_name)
                for i, priority in enumerate(priorities.tolist()):
                    if not table.can_insert(1):
                        self._changed.notify_all()  # the items in already may be what a sampler waits for
                        self._changed.wait_for(lambda: self._closed or table.can_insert(1))
                        if self._closed:
                            return inserted
                    table.insert_leaves([leaf[i] for leaf in leaves], treedef, priority)
                    inserted += 1
            self._changed.notify_all()
        return inserted

    def sample(self, table: str, num_samples: int, timeout_s: float = CALL_TIMEOUT_S) -> Optional[ReplaySample]:
        """`num_samples` items of `table` as one batch, once the table can serve them; None if it could not within
        `timeout_s` (or the server was closed): an abandoned request takes nothing once its time is up."""
        with self._changed:
            local = self._replay.table(table)
            if not self._changed.wait_for(lambda: self._closed or local.can_sample(num_samples), timeout_s) \
                    or self._closed:
                return None
            sample = local.sample(num_samples)
            self._changed.notify_all()  # the rate limiter may now let inserts in
        return sample

    def mutate_priorities(self, table: str, updates: Optional[Mapping[int, float]] = None,
                          deletes: Optional[Sequence[int]] = None) -> None:
        with self._changed:
            self._replay.mutate_priorities(table, updates, deletes)
            self._changed.notify_all()

    def reset(self, table: str) -> None:
        with self._changed:
            self._replay.reset(table)
            self._changed.notify_all()

    def server_info(self) -> Dict[str, TableInfo]:
        with self._changed:
            return self._replay.server_info()

    def close(self) -> None:
        """Ends every wait: inserts still held back return what they inserted, samples None (the program stops)."""
        with self._changed:
            self._closed = True
            self._changed.notify_all()

    def checkpoint(self) -> str:
        """Saves the replay into a new directory under `staging_dir` and returns its path."""
        directory = tempfile.mkdtemp(prefix="replay-", dir=self._staging_dir)
        try:
            with self._changed:
                self._replay.save(directory)
        except BaseException:
            shutil.rmtree(directory, ignore_errors=True)
            raise
        return directory

    def restore(self, directory: str) -> None:
        """The replay `checkpoint` (or `LocalReplay.save`) wrote to `directory`; see `LocalReplay.restore`."""
        with self._changed:
            self._replay.restore(directory)
            self._changed.notify_all()


def _groups(items: List[tuple]) -> List[tuple]:
    """Consecutive items of one table, structure and leaf shapes, stacked: `ReplayServer.insert`'s groups."""
    groups, run, kind = [], [], None
    for item in items:
        table, priority, values, treedef = item
        item_kind = (table, treedef, tuple((value.shape, value.dtype) for value in values))
        if item_kind != kind and run:
            groups.append(_stacked(run))
            run = []
        kind = item_kind
        run.append(item)
    if run:
        groups.append(_stacked(run))
    return groups


def _stacked(items: List[tuple]) -> tuple:
    table, _, values, treedef = items[0]
    priorities = np.array([item[1] for item in items], np.float64)
    leaves = [np.stack([item[2][i] for item in items]) for i in range(len(values))]
    return table, treedef, priorities, leaves


class _Sender:
    """A writer's items on their way to the server: at most one insert call in flight, the rest collected."""

    def __init__(self, handle):
        self._handle = handle
        self._pending: List[tuple] = []  # items not sent yet
        self._oldest = 0.0  # when the oldest pending item was finished
        self._in_flight: Optional[Tuple[concurrent.futures.Future, List[tuple]]] = None

    def add(self, table: str, priority: float, values, treedef) -> None:
        if not self._pending:
            self._oldest = time.monotonic()
        self._pending.append((table, float(priority), values, treedef))
        self._advance(0.0, everything=False)  # never waits: the adder's flush does

    @property
    def unsent(self) -> int:
        """Items not yet in the server's tables as far as this writer knows (pending and in flight)."""
        return len(self._pending) + (len(self._in_flight[1]) if self._in_flight else 0)

    def _send(self, items: List[tuple]) -> None:
        self._in_flight = (self._handle.futures.insert(_groups(items)), items)

    def _settle(self, wait_s: float) -> bool:
        """Whether no call is in flight after waiting up to `wait_s` for it."""
        if self._in_flight is not None:
            future, items = self._in_flight
            try:
                inserted = future.result(timeout=max(wait_s, 0.0))
            except concurrent.futures.TimeoutError:
                return False
            self._in_flight = None
            if inserted < len(items):
                raise ReplayClosed(f"the replay server was closed before it took {len(items) - inserted} of this "
                                   f"writer's items (the program is stopping)")
        return True

    def _advance(self, wait_s: float, everything: bool) -> bool:
        """Settles the call in flight (waiting up to `wait_s`), then sends what is due; whether it sent."""
        if not self._settle(wait_s) or not self._pending:
            return False
        due = len(self._pending) >= MAX_BATCH_ITEMS or time.monotonic() - self._oldest >= MAX_DELAY_S
        if not (everything or due):
            return False
        items, self._pending = self._pending[:MAX_BATCH_ITEMS], self._pending[MAX_BATCH_ITEMS:]
        self._oldest = time.monotonic()
        self._send(items)
        return True

    def pump(self, everything: bool, timeout_s: float) -> None:
        """Sends what is due (with `everything`, all that is pending) once nothing is in flight, waiting up to
        `timeout_s`; raises `ReplayTimeout` if it must wait longer: with `everything`, until the server has every
        item, else while a whole batch waits behind the call in flight (the server is holding inserts back)."""
        deadline = time.monotonic() + timeout_s
        while True:
            if self._advance(min(deadline - time.monotonic(), _POLL_S), everything):
                continue
            if self.unsent == 0 if everything else len(self._pending) < MAX_BATCH_ITEMS:
                return
            if time.monotonic() >= deadline:
                raise ReplayTimeout(f"the replay server has not taken this writer's items within {timeout_s:.1f} s "
                                    f"({self.unsent} waiting): its rate limiter holds inserts back")


class RemoteTrajectoryWriter(LocalTrajectoryWriter):
    """`LocalTrajectoryWriter` whose items go to a `ReplayServer`, batched (see the module docstring).

    `flush(block_until_num_items=0)` (an episode's end) sends everything and waits until the server has it; a
    positive `block_until_num_items` waits only while a whole batch is held back behind the call in flight (a
    writer keeps up to `MAX_BATCH_ITEMS` more items unconfirmed than Reverb's would). Waits past `timeout_ms`
    raise `ReplayTimeout`, which the adders retry."""

    def __init__(self, handle, num_keep_alive_refs: int):
        self._sender = _Sender(handle)
        super().__init__(self._sender.add, num_keep_alive_refs)

    def flush(self, block_until_num_items: int = 0, timeout_ms: Optional[int] = None) -> None:
        super().flush(block_until_num_items, timeout_ms)
        timeout_s = float("inf") if timeout_ms is None else timeout_ms / 1000
        self._sender.pump(everything=block_until_num_items == 0, timeout_s=timeout_s)

    def end_episode(self, clear_buffers: bool = True, timeout_ms: Optional[int] = None) -> None:
        self.flush(0, timeout_ms)
        super().end_episode(clear_buffers, timeout_ms)

    def close(self) -> None:
        """Sends every pending item and waits until the server has them (as Reverb's close, without a limit)."""
        if not self._closed:
            self.flush(0)
        super().close()


class RemoteReplay(LocalFormatReplay):
    """A `ReplayServer` in another process, behind `reverb.Client`'s API as `LocalReplay` offers it: adders and
    datasets take it where they take a `LocalReplay` (`make_dataset_iterator` gives a `RemoteDataset`). Its
    checkpoints are the server's `LocalReplay`'s.

    `handle`: the engine's client of the server (`handle.method(...)` waits for the answer,
    `handle.futures.method(...)` returns a `concurrent.futures.Future`). Picklable where the handle is.
    """

    def __init__(self, handle):
        self.handle = handle
        self._priority_update: Optional[concurrent.futures.Future] = None

    def trajectory_writer(self, num_keep_alive_refs: int) -> RemoteTrajectoryWriter:
        return RemoteTrajectoryWriter(self.handle, num_keep_alive_refs)

    def mutate_priorities(self, table: str, updates: Optional[Mapping[int, float]] = None,
                          deletes: Optional[Sequence[int]] = None) -> None:
        """Sent without waiting for the answer; the previous update must have been answered first (its error, if
        any, is raised here), so updates reach the server in order."""
        if self._priority_update is not None:
            self._priority_update.result()
        self._priority_update = self.handle.futures.mutate_priorities(table, dict(updates or {}), list(deletes or ()))

    def reset(self, table: str) -> None:
        self.handle.reset(table)

    def server_info(self, timeout: Optional[float] = None) -> Dict[str, TableInfo]:
        del timeout
        return self.handle.server_info()

    def checkpoint(self) -> str:
        """The server's `checkpoint()`: the path of a directory holding the replay (on the server's machine)."""
        return self.handle.checkpoint()


class RemoteDataset(DatasetIterator[ReplaySample]):
    """Batches of `batch_size` items of one table of a `RemoteReplay`, one request kept ahead.

    `next()` waits for a batch (the server waits on the table's rate limiter in `CALL_TIMEOUT_S` slices);
    `close()` makes a waiting `next()` raise StopIteration within a slice, as `ReplayDataset`'s does."""

    def __init__(self, replay: RemoteReplay, table: str, batch_size: int):
        if batch_size < 1:
            raise ValueError(f"RemoteDataset: batch_size must be >= 1, got {batch_size}.")
        self.table = table
        self.batch_size = batch_size
        self._handle = replay.handle
        self._request: Optional[concurrent.futures.Future] = None
        self._closed = threading.Event()

    @property
    def samples_per_next(self) -> Dict[str, int]:
        return {self.table: self.batch_size}

    def _ask(self) -> concurrent.futures.Future:
        return self._handle.futures.sample(self.table, self.batch_size, CALL_TIMEOUT_S)

    def ready(self) -> bool:
        """Whether the request kept ahead holds its batch (asked now if none was); False after `close()`."""
        if self._closed.is_set():
            return False
        if self._request is None:
            self._request = self._ask()
        return self._request.done()

    def __next__(self) -> ReplaySample:
        while True:
            if self._request is None:
                self._request = self._ask()
            while True:
                if self._closed.is_set():
                    raise StopIteration
                try:
                    sample = self._request.result(timeout=_POLL_S)
                    break
                except concurrent.futures.TimeoutError:
                    continue
            self._request = self._ask()  # the next batch travels while this one is used
            if sample is not None:
                return sample

    def close(self, timeout: Optional[float] = None) -> None:
        del timeout
        self._closed.set()
