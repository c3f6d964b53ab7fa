"""BatchedAdder: B sub-environments' experience into Reverb with one write per B items.

Reverb's per-write cost is paid per leaf of what is appended (a TrajectoryWriter `append` of 6 leaves costs about
as much as one of 6 leaves of shape [8, ...], and 8 times less than one of 48 leaves), so B sub-environments
sharing a writer only pay less per environment step if their data goes into the same leaves:

    sub-environment i:  agent's own adder (e.g. SequenceAdder)  ->  an in-memory writer (the local replay's)  ->  items
    all of them:        K = B items of one table  ->  stacked  ->  ONE append + ONE create_item of a [K, ...] item

Each sub-environment runs an ordinary adder of the agent (built by the agent's builder), so its items (n-step
transitions, sequences, episodes, with their episode-boundary rules) are exactly those an unbatched actor would
write, and never mix sub-environments: only their storage is grouped. Tables therefore hold items with a leading
axis of K (`batched_tables`), and `UnbatchedIterator` gives the learner batches of single items again, each
`next()` of the agent's dataset serving K learner batches of the agent's own batch size.

Priorities: a stored group carries the largest priority of its K items, and a learner's priority update for any
of them sets the group's (the last one wins). Uniform and queue tables are unaffected.
"""

import dataclasses
import math
import threading
from typing import Callable, Dict, List

import dm_env
import jax
import numpy as np

from acmelike.adders.base import Adder
from acmelike.adders.reverb_base import AdderInterrupted, close_writer, timed_out
from acmelike.datasets import DatasetIterator
from acmelike.replay.local.writer import LocalTrajectoryWriter
from acmelike.replay.tables import ArraySpec, RateLimiterSpec, TableSpec
from acmelike.types import ReplaySample, SampleInfo

_FIRST = np.int8(dm_env.StepType.FIRST)
_STEP_TYPES = tuple(dm_env.StepType)  # indexed by value
_WAIT_SLICE_MS = 200  # blocking flushes wait in slices this long, checking for `interrupt()` in between


class _SubEnvironmentClient:
    """What a sub-environment's adder sees as its `reverb.Client`: writers are in memory, the rest is the real one's.

    `server_info` reports each table's signature without the leading K axis `batched_tables` adds, so the adder
    validates its single items against the item signature it writes.
    """

    def __init__(self, client, sink: Callable):
        self._client, self._sink = client, sink

    def trajectory_writer(self, num_keep_alive_refs: int, **unused_options) -> LocalTrajectoryWriter:
        return LocalTrajectoryWriter(self._sink, num_keep_alive_refs)

    def server_info(self, timeout=None):
        def single(spec):  # an ArraySpec, or a tf.TensorSpec from a Reverb server
            leaf = ArraySpec.of(spec)
            return ArraySpec(leaf.shape[1:], leaf.dtype)

        infos = self._client.server_info(timeout=timeout)
        return {
            name: dataclasses.replace(
                info, signature=None if info.signature is None else jax.tree_util.tree_map(single, info.signature)
            )
            for name, info in infos.items()
        }

    def __getattr__(self, name):
        if name.startswith("__") or name in ("_client", "_sink"):
            raise AttributeError(name)
        return getattr(self._client, name)


class BatchedAdder:
    """Adds the experience of B sub-environments stepped together (`acmelike.wrappers.VectorEnvironment`).

        adder = BatchedAdder(client=client, num_envs=8,
                             make_adder=lambda c: builder.make_adder(replay_client=c, environment_spec=spec,
                                                                     policy=policy))
        adder.add_first(timestep)                    # batched timestep, every step_type FIRST
        adder.add(actions, next_timestep, extras)    # [B] actions, batched timestep, extras with leading [B]

    `add` starts sub-environment i's next episode where `next_timestep.step_type[i]` is FIRST (the vector
    environment reset it, ignoring action i) and adds step i to its episode otherwise. See the module docstring
    for how items are stored.

    Args:
      client: a `reverb.Client`.
      num_envs: B, also the number of items stored together (K).
      make_adder: client -> the agent's adder for one sub-environment, built on the client it is given.
      max_in_flight_items: stored groups that may wait unconfirmed by the server after each write.
    """

    def __init__(self, *, client, num_envs: int, make_adder: Callable[[object], Adder], max_in_flight_items: int = 1):
        if num_envs < 1:
            raise ValueError(f"BatchedAdder: num_envs must be >= 1, got {num_envs}.")
        self.num_envs = num_envs
        self._pending: Dict[str, List[tuple]] = {}
        sub_client = _SubEnvironmentClient(client, self._collect)
        self._adders = [make_adder(sub_client) for _ in range(num_envs)]
        self._writer = client.trajectory_writer(num_keep_alive_refs=1)  # a stored group is one row
        self._max_in_flight_items = max_in_flight_items
        self._interrupted = threading.Event()

    def _collect(self, table: str, priority: float, values: list, treedef) -> None:
        self._pending.setdefault(table, []).append((priority, jax.tree_util.tree_unflatten(treedef, values)))

    def add_first(self, timestep: dm_env.TimeStep) -> None:
        for i, adder in enumerate(self._adders):
            adder.add_first(_sub_timestep(timestep, i))
        self._write_ready()

    def add(self, action, next_timestep: dm_env.TimeStep, extras=()) -> None:
        step_types = next_timestep.step_type
        leaves, treedef = jax.tree_util.tree_flatten(extras)
        for i, adder in enumerate(self._adders):
            sub_timestep = _sub_timestep(next_timestep, i)
            if step_types[i] == _FIRST:
                adder.add_first(sub_timestep)
            else:
                adder.add(action[i], sub_timestep, jax.tree_util.tree_unflatten(treedef, [leaf[i] for leaf in leaves]))
        self._write_ready()

    def _write_ready(self) -> None:
        k = self.num_envs
        for table, items in self._pending.items():
            while len(items) >= k:
                group, items[:k] = items[:k], []
                stacked = jax.tree_util.tree_map(lambda *leaves: np.stack(leaves), *[item for _, item in group])
                self._writer.append(stacked)
                row = jax.tree_util.tree_map(lambda column: column[-1], self._writer.history)
                self._writer.create_item(table=table, priority=max(p for p, _ in group), trajectory=row)
                self._flush(self._max_in_flight_items)

    def _flush(self, block_until_num_items: int) -> None:
        """`writer.flush`, waiting in slices so that `interrupt()` can end the wait."""
        while True:
            if self._interrupted.is_set():
                raise AdderInterrupted("BatchedAdder was interrupted while waiting for the replay server.")
            try:
                self._writer.flush(block_until_num_items=block_until_num_items, timeout_ms=_WAIT_SLICE_MS)
                return
            except Exception as error:  # noqa: BLE001 - only a timed-out slice is retried
                if not timed_out(error):
                    raise

    def reset(self) -> None:
        """Drops every sub-environment's partial episode and the items not yet stored."""
        for adder in self._adders:
            adder.reset()
        self._pending.clear()

    def interrupt(self) -> None:
        """Makes a wait for the server raise `AdderInterrupted` (safe from another thread)."""
        self._interrupted.set()

    def close(self) -> None:
        """Sends what is stored and closes the writer; fewer than K pending items of a table are dropped. After
        `interrupt()` it waits a bounded time (`acmelike.adders.reverb_base.close_writer`)."""
        close_writer(self._writer, self._interrupted)


def _sub_timestep(timestep: dm_env.TimeStep, i: int) -> dm_env.TimeStep:
    observation = timestep.observation
    return dm_env.TimeStep(
        step_type=_STEP_TYPES[timestep.step_type[i]],
        reward=timestep.reward[i],
        discount=timestep.discount[i],
        observation=observation[i] if isinstance(observation, np.ndarray) else jax.tree_util.tree_map(lambda x: x[i], observation),
    )


def batched_tables(tables: List[TableSpec], items_per_write: int) -> List[TableSpec]:
    """The agent's tables, storing groups of `items_per_write` items: signatures gain a leading axis K, and sizes
    and rate limits are divided by K, so they hold and limit the same number of single items."""
    k = items_per_write
    batched = []
    for table in tables:
        limiter = table.rate_limiter
        signature = table.signature
        if signature is not None:
            signature = jax.tree_util.tree_map(lambda spec: ArraySpec((k, *spec.shape), spec.dtype), signature)
        batched.append(
            dataclasses.replace(
                table,
                max_size=max(1, math.ceil(table.max_size / k)),
                signature=signature,
                rate_limiter=RateLimiterSpec(
                    samples_per_insert=limiter.samples_per_insert,
                    min_size_to_sample=max(1, math.ceil(limiter.min_size_to_sample / k)),
                    min_diff=limiter.min_diff / k,
                    max_diff=limiter.max_diff / k,
                ),
            )
        )
    return batched


class UnbatchedIterator(DatasetIterator[ReplaySample]):
    """Learner batches of `batch_size` single items out of a dataset over `batched_tables`.

    Each `next()` of `iterator` gives b groups of K items ([b, K, ...]); they are split into b * K single items and
    served in order (so a queue's order is kept), `batch_size` at a time, a remainder carried into the next batch.
    Give `iterator` a batch of ceil(batch_size / K) groups so every learner step samples what it uses (see
    `launch.experiments.parts.AgentParts.dataset`). Sample info (keys, probabilities) is repeated per item.
    """

    def __init__(self, iterator: DatasetIterator[ReplaySample], items_per_write: int, batch_size: int):
        self._iterator = iterator
        self._k = items_per_write
        self._batch_size = batch_size
        self._buffer: List[ReplaySample] = []  # single items not served yet, in order, as [n, ...] chunks
        self._available = 0

    @property
    def samples_per_next(self) -> Dict[str, int]:
        """What one `next()` of the wrapped iterator samples."""
        return self._iterator.samples_per_next

    def ready(self) -> bool:
        """Whether `next()` returns without waiting, for a synchronous wrapped iterator with `ready()` (a
        `LocalDataset`): a batch is already split off, or one pull of the wrapped iterator serves one."""
        return self._available >= self._batch_size or self._iterator.ready()

    def close(self) -> None:
        """Closes the wrapped iterator (a `ReplayDataset` then lets go of the tables within its timeout). Without
        it, a prefetch thread waiting on the rate limiter at the end of a run would wait on for ever."""
        self._iterator.close()

    def _pull(self) -> None:
        sample = next(self._iterator)
        k, b = self._k, len(sample.info.key)
        data = jax.tree_util.tree_map(lambda x: np.reshape(x, (b * k,) + x.shape[2:]), sample.data)
        info = SampleInfo(*(np.repeat(np.asarray(field), k) for field in sample.info))
        self._buffer.append(ReplaySample(info=info, data=data))
        self._available += b * k

    def __next__(self) -> ReplaySample:
        while self._available < self._batch_size:
            self._pull()
        if len(self._buffer) == 1:
            merged = self._buffer[0]
        else:
            merged = jax.tree_util.tree_map(lambda *xs: np.concatenate(xs), *self._buffer)
        n = self._batch_size
        batch = jax.tree_util.tree_map(lambda x: x[:n], merged)
        self._available -= n
        self._buffer = [jax.tree_util.tree_map(lambda x: x[n:], merged)] if self._available else []
        return batch
