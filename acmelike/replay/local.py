"""LocalReplay: seeded, in-process replay tables behind the part of Reverb's client API our adders and learners use.

A single-process run needs neither Reverb's server threads nor its gRPC stream (hundreds of microseconds per
environment step, even in process), and Reverb's samplers cannot be seeded. `LocalReplay` builds one `LocalTable` per `reverb.Table`
(same sampler, remover, sizes, rate limiter and signature) and stands in for the `reverb.Client`: builders keep
building `reverb.Table`s and adders keep writing through `trajectory_writer`, unchanged. Each table samples with its
own numpy Generator derived from `seed` and the table's name, so runs with the same seed are bit-identical.

    replay = LocalReplay(tables, seed=0)
    adder = builder.make_adder(replay_client=replay, ...)         # items enter their table at `create_item`
    dataset = LocalDataset(replay, table="priority_table", batch_size=256)
    if dataset.ready():
        batch = next(dataset)                                      # ReplaySample of numpy arrays, [256, ...]
        replay.mutate_priorities("priority_table", updates={key: priority})
    replay.save(directory)                                         # and `restore(directory)` to continue identically

Semantics are Reverb 0.7's (reverb/cc/rate_limiter.cc, table.cc, selectors/prioritized.cc), with one difference:
nothing here waits. Where Reverb would block (a sample or insert held back by the rate limiter, a sample from an
empty table) these raise `ReplayWouldBlock`, because in one thread nothing could ever release the wait. Ask
`can_sample` / `can_insert` first. One thread only: nothing here is locked.
"""

import collections
import dataclasses
import hashlib
import json
import os
import shutil
import tempfile
import zipfile
from typing import Dict, Iterable, Iterator, List, Mapping, Optional, Sequence, Tuple

import jax
import numpy as np
import reverb

from acmelike.types import ReplaySample, SampleInfo

STATE_FILE = "local_replay.json"
ARRAYS_FILE = "local_replay.npz"
_FORMAT = "acmelike.LocalReplay/1"
_SAMPLERS = ("uniform", "prioritized", "fifo")


class ReplayWouldBlock(RuntimeError):
    """A sample or insert that Reverb would make wait: in a single thread that wait could never end."""


class _RateLimiter:
    """Reverb's RateLimiter (reverb/cc/rate_limiter.cc) without the waiting: counters since creation or reset.

    Evictions and items deleted after max_times_sampled count as deletes. The arithmetic is Reverb's, in the same
    order and in doubles, so both give the same verdicts for the same counters.
    """

    __slots__ = ("samples_per_insert", "min_size_to_sample", "min_diff", "max_diff", "inserts", "samples", "deletes")

    def __init__(self, samples_per_insert: float, min_size_to_sample: int, min_diff: float, max_diff: float):
        self.samples_per_insert = samples_per_insert
        self.min_size_to_sample = min_size_to_sample
        self.min_diff = min_diff
        self.max_diff = max_diff
        self.inserts = self.samples = self.deletes = 0

    def can_sample(self, num_samples: int) -> bool:
        if self.inserts - self.deletes < self.min_size_to_sample:
            return False
        return self.inserts * self.samples_per_insert - self.samples - num_samples >= self.min_diff

    def can_insert(self, num_inserts: int) -> bool:
        if self.inserts + num_inserts - self.deletes <= self.min_size_to_sample:  # free until the minimum size
            return True
        return (num_inserts + self.inserts) * self.samples_per_insert - self.samples <= self.max_diff

    def config(self) -> dict:
        return {"samples_per_insert": self.samples_per_insert, "min_size_to_sample": self.min_size_to_sample,
                "min_diff": self.min_diff, "max_diff": self.max_diff}


class _Leaf:
    """One leaf of every item, by slot: a preallocated [capacity, *shape] array when the signature fixes the shape,
    else a list of per-item arrays (stacked when sampled).

    A leaf learned from a table's first item (no signature) starts as an array of that item's shape and dtype, and
    becomes a list the first time an item differs: a table without signature accepts anything, as in Reverb.
    """

    __slots__ = ("name", "dtype", "shape", "learned", "values")

    def __init__(self, name: str, dtype, shape: Tuple[Optional[int], ...], capacity: int, learned: bool):
        self.name, self.dtype, self.shape, self.learned = name, np.dtype(dtype), shape, learned
        fixed = None not in shape
        self.values = np.zeros((capacity, *shape), self.dtype) if fixed else [None] * capacity

    def check(self, value: np.ndarray, table: str, occupied: Sequence[int] = ()) -> None:
        """Raises a ValueError if `value` does not fit the table's signature (Reverb checks at create_item).

        A learned leaf becomes a list instead, keeping the values at the `occupied` slots."""
        if value.dtype == self.dtype and value.shape == self.shape:
            return
        if self.learned:
            if isinstance(self.values, np.ndarray):  # the first item that differs: anything goes from now on
                values = [None] * len(self.values)
                for slot in occupied:
                    values[slot] = self.values[slot]
                self.values = values
            return
        if value.dtype == self.dtype and value.ndim == len(self.shape) and all(
            want is None or want == got for want, got in zip(self.shape, value.shape)
        ):
            return
        shape = tuple("None" if dim is None else dim for dim in self.shape)
        raise ValueError(
            f"An item for table {table!r} does not fit its signature: leaf {self.name} should be {self.dtype} of "
            f"shape {shape}, got {value.dtype} of shape {value.shape}."
        )

    def gather(self, slots: np.ndarray, table: str) -> np.ndarray:
        if isinstance(self.values, np.ndarray):
            return self.values[slots]
        try:
            return np.stack([self.values[slot] for slot in slots])
        except ValueError:
            shapes = sorted({self.values[slot].shape for slot in slots})
            raise ValueError(
                f"Cannot batch leaf {self.name} of table {table!r}: the sampled items have shapes {shapes} (a "
                f"dataset over a Reverb table could not batch them either). Give the table a fixed-shape signature."
            ) from None


def _leaves_of_signature(signature, capacity: int, table: str) -> Tuple[object, List[_Leaf]]:
    flat, treedef = jax.tree_util.tree_flatten_with_path(signature)
    leaves = []
    for path, spec in flat:
        name = jax.tree_util.keystr(path)
        if spec.shape.rank is None:
            raise ValueError(f"Table {table!r}: signature leaf {name} has unknown rank, which LocalTable cannot store.")
        leaves.append(_Leaf(name, spec.dtype.as_numpy_dtype, tuple(spec.shape.as_list()), capacity, learned=False))
    return treedef, leaves


def _weights(priorities: np.ndarray, exponent: float) -> np.ndarray:
    """Reverb's sampling weights: priority ** exponent, but 0 for priority 0 even when the exponent is 0."""
    priorities = np.asarray(priorities, np.float64)
    return np.where(priorities == 0.0, 0.0, priorities**exponent)


def _table_rng(seed: int, name: str) -> np.random.Generator:
    """A Generator that depends on `seed` and the table's name only: stable across runs (no salted `hash`)."""
    digest = hashlib.blake2b(name.encode("utf-8"), digest_size=16).digest()
    words = np.frombuffer(digest, np.uint32).tolist()
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence([seed, *words])))


class LocalTable:
    """A Reverb table in this process: Reverb's sampling, removal and rate limiting, seeded, never waiting.

    Samplers: Uniform (with replacement, probability 1 / size), Prioritized (P(i) = w_i / sum w, w = priority **
    exponent, priority 0 never sampled unless all are 0, then uniform), Fifo (the oldest item, probability 1).
    Remover: Fifo; an insert into a full table first evicts the oldest item. Items whose times sampled reach
    `max_times_sampled` (> 0) are deleted as they are sampled, so a queue (Fifo sampler, max_times_sampled 1) hands
    out each item once, in insertion order. Evictions and such deletions count as deletes for the rate limiter.

    Items live in per-leaf arrays preallocated from the signature (`_Leaf`); a batch is one fancy index per leaf.
    A key encodes the item's insertion number and its slot, `(number << slot_bits) | slot`: priority updates find
    their slots without a dictionary, and keys sort in insertion order. Keys are unique within a table.
    """

    def __init__(self, table: reverb.Table, *, seed: int):
        info = table.info
        self.name = info.name
        self._info = info  # what `server_info` reports, with the current size
        self.max_size = info.max_size
        self._max_times_sampled = info.max_times_sampled
        self._sampler = info.sampler_options.WhichOneof("distribution")
        remover = info.remover_options.WhichOneof("distribution")
        if self._sampler not in _SAMPLERS or remover != "fifo":
            raise ValueError(
                f"LocalTable supports samplers {list(_SAMPLERS)} with a fifo remover, but table {self.name!r} has "
                f"sampler {self._sampler!r} and remover {remover!r}."
            )
        self._exponent = info.sampler_options.prioritized.priority_exponent
        limits = info.rate_limiter_info
        self._limiter = _RateLimiter(limits.samples_per_insert, limits.min_size_to_sample, limits.min_diff,
                                     limits.max_diff)
        # The signature as the builder gave it: its namedtuples (Transition, Step) are the samples' types. The
        # decoded `info.signature` has stand-in classes with the same leaves.
        self._signature = table._signature
        self._rng = _table_rng(seed, self.name)
        self._slot_bits = max(1, (self.max_size - 1).bit_length())
        capacity = self.max_size
        self._keys = np.zeros(capacity, np.uint64)  # by slot; 0 where free (insertion numbers start at 1)
        self._priorities = np.zeros(capacity, np.float64)  # by slot
        self._times_sampled = np.zeros(capacity, np.int64)  # by slot
        self._dense = np.zeros(capacity, np.int64)  # the slots of the items, at positions 0 .. size - 1
        self._position = np.zeros(capacity, np.int64)  # by slot: where it is in `_dense`
        self._dense_weights = np.zeros(capacity, np.float64)  # sampling weights, by position (prioritized only)
        self._clear()

    def _clear(self) -> None:
        self._size = 0
        self._next_number = 1
        self._free = []  # a stack of the slots items have left
        self._unused = 0  # slots from here on have never held an item
        self._order = collections.deque()  # keys in insertion order; deleted ones are skipped when met
        self._samples_left = 0  # samples the items can still give before max_times_sampled (when > 0)
        self._keys[:] = 0
        limiter = self._limiter
        limiter.inserts = limiter.samples = limiter.deletes = 0
        if self._signature is None:
            self._treedef, self._leaves = None, None  # learned from the first item
        else:
            self._treedef, self._leaves = _leaves_of_signature(self._signature, self.max_size, self.name)

    @property
    def size(self) -> int:
        """The number of items in the table."""
        return self._size

    # The rate limiter's verdicts.

    def can_sample(self, num_samples: int) -> bool:
        """Whether `sample(num_samples)` returns now: Reverb's rate limiter allows it and the items can serve it.

        Reverb checks its rate limiter before each item of a batch. When items leave as they are sampled
        (max_times_sampled > 0), the draws before the last one may delete some: this asks that min_size_to_sample
        items are left however the draws fall (exact for queues, where every draw deletes its item).
        """
        if num_samples < 1:
            raise ValueError(f"num_samples must be >= 1, got {num_samples}.")
        limiter = self._limiter
        if self._size == 0 or not limiter.can_sample(num_samples):
            return False
        if not self._max_times_sampled:
            return True
        if self._samples_left < num_samples:
            return False
        if self._max_times_sampled == 1:
            deletions = num_samples - 1
        else:  # the most items num_samples - 1 draws can use up: those closest to max_times_sampled first
            left = np.sort(self._max_times_sampled - self._times_sampled[self._dense[:self._size]])
            deletions = int(np.searchsorted(np.cumsum(left), num_samples - 1, side="right"))
        return limiter.inserts - limiter.deletes - deletions >= limiter.min_size_to_sample

    def can_insert(self, num_inserts: int = 1) -> bool:
        """Whether Reverb's rate limiter lets `num_inserts` items in now (the table's size does not matter: a full
        table evicts its oldest item)."""
        if num_inserts < 1:
            raise ValueError(f"num_inserts must be >= 1, got {num_inserts}.")
        return self._limiter.can_insert(num_inserts)

    # Inserting.

    def insert(self, data, priority: float) -> int:
        """Inserts one item (a nest of arrays with the table's signature) and returns its key."""
        leaves, treedef = jax.tree_util.tree_flatten(data)
        return self._insert([np.asarray(leaf) for leaf in leaves], treedef, priority)

    def _insert(self, values: List[np.ndarray], treedef, priority: float) -> int:
        """Inserts the flat leaves of an item; `treedef` is its structure (kept only by a table without signature)."""
        limiter = self._limiter
        if not limiter.can_insert(1):
            raise ReplayWouldBlock(
                f"Table {self.name!r}: the rate limiter holds this insert back ((inserts + 1) * samples_per_insert - "
                f"samples = {(limiter.inserts + 1) * limiter.samples_per_insert - limiter.samples} > max_diff="
                f"{limiter.max_diff}) until the learner samples more. In one thread nothing can sample meanwhile: "
                f"build the tables inside acmelike.replay.inserts_never_block()."
            )
        leaves = self._leaves
        if leaves is None:
            leaves = self._learn(values, treedef)
        elif len(values) != len(leaves):
            raise ValueError(
                f"An item for table {self.name!r} has {len(values)} leaves, but the table's items have "
                f"{len(leaves)}: {[leaf.name for leaf in leaves]}."
            )
        for leaf, value in zip(leaves, values):
            if value.dtype != leaf.dtype or value.shape != leaf.shape:  # `check`'s own first test, inlined
                leaf.check(value, self.name, self._dense[:self._size].tolist())
        priority = float(priority)
        if self._sampler == "prioritized" and not priority >= 0:  # also rejects NaN, as Reverb does
            raise ValueError(f"Table {self.name!r}: priorities must be >= 0 and not NaN, got {priority}.")
        number = self._next_number
        if number >> (64 - self._slot_bits):
            raise OverflowError(f"Table {self.name!r} has run out of 64-bit keys.")
        if self._size == self.max_size:
            self._delete(self._oldest_slot())
        if self._free:
            slot = self._free.pop()
        else:
            slot, self._unused = self._unused, self._unused + 1
        for leaf, value in zip(leaves, values):
            leaf.values[slot] = value
        key = (number << self._slot_bits) | slot
        self._next_number = number + 1
        self._keys[slot] = key
        self._priorities[slot] = priority
        self._times_sampled[slot] = 0
        position = self._size
        self._dense[position] = slot
        self._position[slot] = position
        if self._sampler == "prioritized":
            self._dense_weights[position] = 0.0 if priority == 0 else priority**self._exponent
        self._size = position + 1
        self._order.append(key)
        self._samples_left += self._max_times_sampled
        limiter.inserts += 1
        return key

    def _learn(self, values: List[np.ndarray], treedef) -> List[_Leaf]:
        """The leaves of a table without signature, from its first item (after a reset: from the next one)."""
        paths = [path for path, _ in jax.tree_util.tree_flatten_with_path(treedef.unflatten(values))[0]]
        self._treedef = treedef
        self._leaves = [
            _Leaf(jax.tree_util.keystr(path), value.dtype, value.shape, self.max_size, learned=True)
            for path, value in zip(paths, values)
        ]
        return self._leaves

    # Removing.

    def _slot_of(self, key: int) -> Optional[int]:
        slot = key & ((1 << self._slot_bits) - 1)
        return slot if slot < self.max_size and int(self._keys[slot]) == key else None

    def _oldest_slot(self) -> int:
        order = self._order
        while True:
            slot = self._slot_of(order[0])
            if slot is not None:
                return slot
            order.popleft()

    def _delete(self, slot: int) -> None:
        position, last = int(self._position[slot]), self._size - 1
        if position != last:  # the last item fills the gap, so positions 0 .. size - 1 stay the items
            moved = self._dense[last]
            self._dense[position] = moved
            self._position[moved] = position
            self._dense_weights[position] = self._dense_weights[last]
        self._size = last
        if self._max_times_sampled:
            self._samples_left -= self._max_times_sampled - int(self._times_sampled[slot])
        self._keys[slot] = 0
        self._free.append(int(slot))
        self._limiter.deletes += 1
        if len(self._order) > 2 * self._size + 64:  # drop deleted keys, so the deque stays O(size)
            self._order = collections.deque(key for key in self._order if self._slot_of(key) is not None)

    def mutate_priorities(self, updates: Mapping[int, float], deletes: Iterable[int] = ()) -> None:
        """Deletes the items `deletes`, then sets the priorities `updates` ({key: priority}), as Reverb does: keys no
        longer in the table are ignored. Invalid priorities raise before anything changes."""
        keys = np.fromiter(updates.keys(), np.uint64, len(updates))
        priorities = np.fromiter(updates.values(), np.float64, len(updates))
        if self._sampler == "prioritized" and not np.all(priorities >= 0):
            raise ValueError(f"Table {self.name!r}: priorities must be >= 0 and not NaN, got {priorities.tolist()}.")
        for key in deletes:
            slot = self._slot_of(int(key))
            if slot is not None:
                self._delete(slot)
        slots = (keys & np.uint64((1 << self._slot_bits) - 1)).astype(np.int64)
        present = slots < self.max_size
        present[present] = self._keys[slots[present]] == keys[present]
        slots = slots[present]
        self._priorities[slots] = priorities[present]
        if self._sampler == "prioritized":
            self._dense_weights[self._position[slots]] = _weights(priorities[present], self._exponent)

    def reset(self) -> None:
        """Empties the table and zeroes its rate limiter's counters, like `reverb.Client.reset`. Keys keep counting,
        and the random stream goes on."""
        self._clear()

    # Sampling.

    def sample(self, num_samples: int) -> ReplaySample:
        """`num_samples` items as one `ReplaySample` with a leading batch axis: keys uint64, probabilities float64,
        table sizes int64 (each at the time its item was sampled), data structured like the signature.

        Raises `ReplayWouldBlock` where Reverb would wait (see `can_sample`).
        """
        if not self.can_sample(num_samples):
            raise ReplayWouldBlock(self._why_not(num_samples))
        if self._max_times_sampled:
            keys, probabilities, sizes, slots = self._sample_one_by_one(num_samples)
        else:  # nothing leaves the table while sampling: draw the whole batch at once
            positions, probabilities = self._select(num_samples)
            slots = self._dense[positions]
            keys = self._keys[slots]
            sizes = np.full(num_samples, self._size, np.int64)
            np.add.at(self._times_sampled, slots, 1)
        self._limiter.samples += num_samples
        data = self._treedef.unflatten([leaf.gather(slots, self.name) for leaf in self._leaves])
        return ReplaySample(info=SampleInfo(key=keys, probability=probabilities, table_size=sizes), data=data)

    def _select(self, count: int) -> Tuple[np.ndarray, np.ndarray]:
        """Positions (in `_dense`) and probabilities of `count` draws from the items as they are now."""
        size = self._size
        if self._sampler == "fifo":
            oldest = self._position[self._oldest_slot()]
            return np.full(count, oldest, np.int64), np.ones(count)
        if self._sampler == "prioritized":
            weights = self._dense_weights[:size]
            cumulative = np.cumsum(weights)
            total = cumulative[-1]
            if total > 0:
                positions = np.searchsorted(cumulative, self._rng.random(count) * total, side="right")
                # A draw rounded up to `total` takes the last item of positive weight.
                np.minimum(positions, np.searchsorted(cumulative, total, side="left"), out=positions)
                return positions, weights[positions] / total
        # Uniform, and prioritized when every priority is 0 (as Reverb does).
        return self._rng.integers(size, size=count), np.full(count, 1.0 / size)

    def _sample_one_by_one(self, count: int):
        """Reverb's order when items may leave: each draw sees the table as the previous ones left it."""
        keys, probabilities, sizes, slots = [], [], [], []
        for _ in range(count):
            positions, probability = self._select(1)
            slot = int(self._dense[positions[0]])
            keys.append(int(self._keys[slot]))
            probabilities.append(probability[0])
            sizes.append(self._size)
            slots.append(slot)
            times = int(self._times_sampled[slot]) + 1
            self._times_sampled[slot] = times
            self._samples_left -= 1
            if times == self._max_times_sampled:
                self._delete(slot)  # its data stays in place until the slot is reused by an insert
        return (np.array(keys, np.uint64), np.array(probabilities, np.float64), np.array(sizes, np.int64),
                np.array(slots, np.int64))

    def _why_not(self, num_samples: int) -> str:
        limiter = self._limiter
        held = limiter.inserts - limiter.deletes
        diff = limiter.inserts * limiter.samples_per_insert - limiter.samples - num_samples
        if self._size == 0:
            reason = "the table is empty"
        elif held < limiter.min_size_to_sample:
            reason = f"it holds {held} items, fewer than min_size_to_sample={limiter.min_size_to_sample}"
        elif diff < limiter.min_diff:
            reason = (f"the rate limiter holds sampling back until more items are inserted (inserts * "
                      f"samples_per_insert - samples - {num_samples} = {diff} < min_diff={limiter.min_diff})")
        else:
            reason = (f"its items can give only {self._samples_left} more samples before max_times_sampled="
                      f"{self._max_times_sampled}, or fewer than min_size_to_sample={limiter.min_size_to_sample} "
                      f"would be left before the last one")
        return (f"Table {self.name!r} cannot serve {num_samples} samples now: {reason}. Reverb would wait; in one "
                f"thread nothing else could insert meanwhile, so ask can_sample() first.")

    # What `server_info` reports, and the state a resumed run needs.

    def info(self) -> "reverb.reverb_types.TableInfo":
        """The table's `reverb` TableInfo (as `reverb.Client.server_info` gives it) with its current size.

        num_episodes, num_deleted_episodes and num_unique_samples are not tracked (0)."""
        return dataclasses.replace(self._info, current_size=self._size)

    def _config(self) -> dict:
        """What must be the same for a saved state to load into this table."""
        return {
            "sampler": self._sampler,
            "priority_exponent": self._exponent,
            "max_size": self.max_size,
            "max_times_sampled": self._max_times_sampled,
            "rate_limiter": self._limiter.config(),
            "leaves": None if self._signature is None else [
                [leaf.name, str(leaf.dtype), [dim for dim in leaf.shape]] for leaf in self._leaves
            ],
        }

    def state(self) -> Tuple[dict, Dict[str, np.ndarray]]:
        """Everything a resumed run needs to go on identically: (JSON-ready metadata, named arrays).

        Arrays list the items in insertion order: "key", "priority", "weight" (the sampling weight),
        "times_sampled", "position" (the place in the sampling order), "leaf<i>" (fixed shapes; else "leaf<i>.flat"
        and "leaf<i>.shapes"); and "free", the stack of slots items have left. The metadata holds the slots never
        used yet, the rate limiter's counters, the next insertion number and the Generator's state.
        """
        if self._size and self._signature is None:
            raise ValueError(
                f"Table {self.name!r} has no signature: its item structure was learned from its first item and "
                f"cannot be saved without pickle. Build the table with a signature."
            )
        slots = self._dense[:self._size]
        order = np.argsort(self._keys[slots], kind="stable")  # keys sort in insertion order
        slots = slots[order]
        arrays = {
            "key": self._keys[slots],
            "priority": self._priorities[slots],
            "weight": self._dense_weights[self._position[slots]],  # saved: recomputed ones could differ in an ulp
            "times_sampled": self._times_sampled[slots],
            "position": self._position[slots],
            "free": np.array(self._free, np.int64),
        }
        for i, leaf in enumerate(self._leaves or ()):
            if isinstance(leaf.values, np.ndarray):
                arrays[f"leaf{i}"] = leaf.values[slots]
            else:
                items = [leaf.values[slot] for slot in slots]
                arrays[f"leaf{i}.flat"] = np.concatenate([item.ravel() for item in items] or [np.zeros(0, leaf.dtype)])
                arrays[f"leaf{i}.shapes"] = np.array([item.shape for item in items], np.int64).reshape(
                    len(items), len(leaf.shape))
        limiter = self._limiter
        meta = {
            "name": self.name,
            "config": self._config(),
            "size": self._size,
            "unused": self._unused,
            "next_number": self._next_number,
            "rate_limiter": {"inserts": limiter.inserts, "samples": limiter.samples, "deletes": limiter.deletes},
            "rng": self._rng.bit_generator.state,
        }
        return meta, arrays

    def _loaded(self, meta: dict, arrays: Mapping[str, np.ndarray], source: str):
        """Checks a `state()` and returns the function that makes it the table's (so a bad one changes nothing).

        `source` names where the state came from, for error messages."""

        def fail(problem):
            raise ValueError(f"{source}: table {self.name!r}: {problem}")

        config = self._config()
        saved = meta["config"]
        for field, value in config.items():
            if saved.get(field) != value:
                fail(f"it was saved with {field}={saved.get(field)!r}, but this table has {field}={value!r}")
        size, unused, capacity = int(meta["size"]), int(meta["unused"]), self.max_size

        def array(name, dtype, shape):
            if name not in arrays:
                fail(f"the entry {name!r} is missing")
            value = arrays[name]
            if value.dtype != dtype or value.shape != shape:
                fail(f"the entry {name!r} is {value.dtype} {value.shape}, expected {np.dtype(dtype)} {shape}")
            return value

        keys = array("key", np.uint64, (size,))
        priorities = array("priority", np.float64, (size,))
        weights = array("weight", np.float64, (size,))
        times_sampled = array("times_sampled", np.int64, (size,))
        positions = array("position", np.int64, (size,))
        free = array("free", np.int64, (unused - size,))
        slots = (keys & np.uint64((1 << self._slot_bits) - 1)).astype(np.int64)
        if not (unused <= capacity and np.array_equal(np.sort(np.concatenate([slots, free])), np.arange(unused))
                and np.array_equal(np.sort(positions), np.arange(size))):
            fail("its keys, free slots and positions are inconsistent")
        leaf_values = []
        for i, leaf in enumerate(self._leaves if size else ()):
            if isinstance(leaf.values, np.ndarray):
                leaf_values.append(array(f"leaf{i}", leaf.dtype, (size, *leaf.shape)))
                continue
            flat = arrays.get(f"leaf{i}.flat")
            shapes = array(f"leaf{i}.shapes", np.int64, (size, len(leaf.shape)))
            if flat is None or flat.dtype != leaf.dtype or flat.size != int(np.prod(shapes, axis=1).sum()):
                fail(f"the entry 'leaf{i}.flat' is missing or does not match 'leaf{i}.shapes'")
            ends = np.cumsum(np.prod(shapes, axis=1))
            items = [part.reshape(shape) for part, shape in zip(np.split(flat, ends[:-1]) if size else [], shapes)]
            for item in items:
                leaf.check(item, self.name)
            leaf_values.append(items)
        counters = meta["rate_limiter"]
        rng = np.random.Generator(np.random.PCG64(0))  # its state is replaced
        try:
            rng.bit_generator.state = meta["rng"]
        except (TypeError, ValueError, KeyError) as error:
            fail(f"its random generator state is invalid ({error})")

        def apply():
            self._clear()
            for leaf, values in zip(self._leaves or (), leaf_values):
                for slot, value in zip(slots.tolist(), values):
                    leaf.values[slot] = value
            self._keys[slots] = keys
            self._priorities[slots] = priorities
            self._times_sampled[slots] = times_sampled
            self._position[slots] = positions
            self._dense[positions] = slots
            self._dense_weights[positions] = weights
            self._size = size
            self._free = free.tolist()
            self._unused = unused
            self._order = collections.deque(keys.tolist())
            self._next_number = int(meta["next_number"])
            if self._max_times_sampled:
                self._samples_left = int(size * self._max_times_sampled - times_sampled.sum())
            limiter = self._limiter
            limiter.inserts, limiter.samples, limiter.deletes = (
                int(counters["inserts"]), int(counters["samples"]), int(counters["deletes"]))
            self._rng = rng

        return apply


class TrajectoryColumn:
    """Cells of one history column, what indexing `writer.history` gives (like `reverb.TrajectoryColumn`): a single
    row (`column[i]`, no time axis) or several (`column[a:b]`, a leading time axis)."""

    __slots__ = ("_values", "_squeezed")

    def __init__(self, values: tuple, squeezed: bool):
        self._values, self._squeezed = values, squeezed

    def numpy(self) -> np.ndarray:
        """The referenced data: one row's array, or the rows stacked."""
        return np.array(self._values[0]) if self._squeezed else self._stacked()

    def _stacked(self) -> np.ndarray:
        if not self._values:
            raise ValueError("An empty slice of a history column cannot be part of an item.")
        try:
            return np.stack(self._values)
        except ValueError:
            shapes = [(value.dtype, value.shape) for value in self._values]
            raise ValueError(f"The rows of a trajectory column differ in dtype or shape: {shapes}.") from None


class _Column:
    """One leaf's history in the writer: live (it follows appends and is cleared in place, as Reverb's are).

    Rows are numbered from the last clear; only the last `keep` rows can be referenced (num_keep_alive_refs).
    The writer appends to `values` directly (once per leaf and step) and calls `trim` now and then.
    """

    __slots__ = ("values", "start", "keep", "path")

    def __init__(self, start: int, keep: int, path: str):
        self.values: list = []  # rows start, start + 1, ...; None where a row has no data for this column
        self.start = start  # a column created after row 0 has no data before its first row
        self.keep = keep
        self.path = path

    def trim(self) -> None:
        """Drops the rows that can no longer be referenced."""
        drop = len(self.values) - self.keep
        if drop > 0:
            del self.values[:drop]
            self.start += drop

    def clear(self) -> None:
        self.values.clear()
        self.start = 0

    def __len__(self) -> int:
        return self.start + len(self.values)

    def __getitem__(self, index) -> TrajectoryColumn:
        values, start = self.values, self.start
        rows = start + len(values)
        if type(index) is int:  # the common case, first
            row = index + rows if index < 0 else index
            if rows - self.keep <= row < rows and row >= start and values[row - start] is not None:
                return TrajectoryColumn((values[row - start],), True)
        if isinstance(index, (int, np.integer)):
            row = index + rows if index < 0 else index
            if not 0 <= row < rows:
                raise IndexError(f"Row {index} of history column {self.path} does not exist ({rows} rows).")
            return TrajectoryColumn((self._cell(row, rows),), True)
        if isinstance(index, slice):
            return TrajectoryColumn(tuple(self._cell(row, rows) for row in range(*index.indices(rows))), False)
        if isinstance(index, list):
            return TrajectoryColumn(tuple(self[i]._values[0] for i in index), False)
        raise TypeError(f"History column indices must be integers, slices or lists of integers, not {type(index)}.")

    def _cell(self, row: int, rows: int):
        if row < rows - self.keep:
            raise ValueError(
                f"Row {row} of history column {self.path} is out of the writer's keep-alive window: only the last "
                f"{self.keep} rows (num_keep_alive_refs) can be referenced, and {rows} have been appended."
            )
        value = self.values[row - self.start] if row >= self.start else None
        if value is None:
            raise ValueError(f"Row {row} of history column {self.path} holds no data.")
        return value


def _owned(value):
    """A leaf as the writer keeps it: numpy scalars are immutable, arrays are copied (the caller may reuse them)."""
    return value if isinstance(value, np.generic) else np.array(value)


_WHOLE = object()  # the one field of a writer whose rows are not dicts


class LocalTrajectoryWriter:
    """Reverb's TrajectoryWriter over `LocalTable`s: items are inserted synchronously by `create_item`.

    Rows are appended with `append(data)`; `history` has the structure of the appended data (dict rows: the
    union of their fields) with one live column per leaf, indexed by row since the last `end_episode` that cleared
    the buffers: `history["observation"][-1]` is a single row without time axis, `[-3:]` a leading time axis of
    3. A field missing from a row holds no data there. Items hold copies of the referenced rows, exactly what a
    Reverb dataset would hand back for them. `flush` has nothing to wait for.

    Differences from Reverb 0.7.2: the nest of a field (or of non-dict rows) is fixed by its first append, and a
    partial step (dict rows only) is closed by `end_episode`.
    """

    def __init__(self, tables: Mapping[str, LocalTable], num_keep_alive_refs: int):
        if num_keep_alive_refs < 1:
            raise ValueError(f"num_keep_alive_refs must be >= 1, got {num_keep_alive_refs}.")
        self._tables = tables
        self._keep = num_keep_alive_refs
        # field -> (treedef, or None for a leaf field; its columns; their `values` lists)
        self._fields: Dict[object, tuple] = {}
        self._history: Dict[object, object] = {}  # field -> its nest of columns
        self._columns: List[_Column] = []
        self._rows = 0  # rows since the last clear, an open partial one included
        self._untrimmed = 0  # rows appended since the columns were last trimmed
        self._open = False  # the last row was appended with partial_step=True
        self._closed = False

    @property
    def history(self):
        """The columns, structured like the appended data (live: they follow later appends)."""
        if not self._fields:
            raise RuntimeError("history cannot be accessed before `append` is called at least once.")
        return self._history[_WHOLE] if _WHOLE in self._history else self._history

    def append(self, data, *, partial_step: bool = False) -> None:
        """Appends one row; with `partial_step`, the next append (dict rows) adds fields to the same row."""
        if self._closed:
            raise RuntimeError("append was called on a closed writer.")
        fields = self._fields
        if type(data) is not dict:
            if fields and _WHOLE not in fields:
                raise ValueError(f"This writer's rows are dicts (fixed by its first append), but got {type(data)}.")
            if partial_step:
                raise ValueError("Partial steps need dict rows.")
            data = {_WHOLE: data}
        elif _WHOLE in fields:
            raise ValueError("This writer's rows are not dicts (fixed by its first append), but got a dict.")
        if self._open:
            self._fill_open_row(data)
            self._open = partial_step
            return
        start, appended = self._rows, 0
        for field, value in data.items():
            if value is None:
                continue
            entry = fields.get(field)
            if entry is None:
                entry = self._add_field(field, value, start)
            treedef, _, lists = entry
            if treedef is None:
                lists[0].append(value if isinstance(value, np.generic) else np.array(value))
            else:
                for values, leaf in zip(lists, self._leaves_of(field, treedef, value)):
                    values.append(_owned(leaf))
            appended += 1
        if appended != len(fields):  # the fields this row lacks hold no data in it
            for column in self._columns:
                if len(column) == start:
                    column.values.append(None)
        self._rows = start + 1
        self._open = partial_step
        self._untrimmed += 1
        if self._untrimmed > self._keep + 16:  # amortised: columns hold at most 2 keep + 16 rows
            self._untrimmed = 0
            for column in self._columns:
                column.trim()

    def _fill_open_row(self, data: dict) -> None:
        for field, value in data.items():
            if value is None:
                continue
            entry = self._fields.get(field)
            if entry is None:
                entry = self._add_field(field, value, self._rows - 1)
                for values in entry[2]:
                    values.append(None)
            treedef, columns, _ = entry
            for column, leaf in zip(columns, [value] if treedef is None else self._leaves_of(field, treedef, value)):
                if not column.values or column.values[-1] is not None:
                    raise ValueError(f"Field {column.path} was already set in this step by a previous (partial) "
                                     f"append.")
                column.values[-1] = _owned(leaf)

    def _add_field(self, field, value, start: int) -> tuple:
        flat, treedef = jax.tree_util.tree_flatten_with_path(value)
        name = "" if field is _WHOLE else f"[{field!r}]"
        columns = [_Column(start, self._keep, name + jax.tree_util.keystr(path)) for path, _ in flat]
        leaf = treedef.num_nodes == 1 and treedef.num_leaves == 1
        self._fields[field] = entry = (None if leaf else treedef, columns, [column.values for column in columns])
        self._history[field] = treedef.unflatten(columns)
        self._columns.extend(columns)
        return entry

    @staticmethod
    def _leaves_of(field, treedef, value) -> list:
        try:
            return treedef.flatten_up_to(value)
        except (ValueError, TypeError):
            name = "the rows" if field is _WHOLE else f"field {field!r}"
            raise ValueError(
                f"The structure of {name} changed: it was {treedef} at its first append, now it is "
                f"{jax.tree_util.tree_structure(value)}."
            ) from None

    def create_item(self, table: str, priority: float, trajectory) -> None:
        """Inserts into `table` an item holding the data `trajectory` references (a nest of history cells)."""
        if self._closed:
            raise RuntimeError("create_item was called on a closed writer.")
        local = self._tables.get(table)
        if local is None:
            raise ValueError(f"There is no table {table!r}; the tables are {sorted(self._tables)}.")
        cells, treedef = jax.tree_util.tree_flatten(trajectory)
        values = []
        for cell in cells:
            if type(cell) is not TrajectoryColumn:
                raise TypeError(f"All leaves of `trajectory` must be history cells (writer.history[...][...]), "
                                f"got {trajectory}.")
            values.append(cell._values[0] if cell._squeezed else cell._stacked())  # the table copies them
        local._insert(values, treedef, priority)

    def flush(self, block_until_num_items: int = 0, timeout_ms: Optional[int] = None) -> None:
        """Nothing to wait for: `create_item` has inserted every item already."""
        del timeout_ms
        if block_until_num_items < 0:
            raise ValueError(f"block_until_num_items must be >= 0, got {block_until_num_items}.")

    def end_episode(self, clear_buffers: bool = True, timeout_ms: Optional[int] = None) -> None:
        """Ends the episode: with `clear_buffers`, the history is emptied (in place) and rows count from 0 again."""
        del timeout_ms
        self._open = False
        if clear_buffers:
            self._rows = 0
            for column in self._columns:
                column.clear()

    def close(self) -> None:
        """Makes the writer unusable; its items are in their tables already."""
        self._closed = True


class LocalReplay:
    """Seeded in-process replay with the part of `reverb.Client`'s API our adders, datasets and learners use.

    Args:
      tables: the `reverb.Table`s a builder made (never served); each becomes a `LocalTable`. Their samplers must be
        Uniform, Prioritized or Fifo, their removers Fifo.
      seed: a non-negative integer; each table samples with a Generator derived from it and the table's name.
    """

    def __init__(self, tables: Sequence[reverb.Table], *, seed: int):
        if not isinstance(seed, (int, np.integer)) or seed < 0:
            raise ValueError(f"LocalReplay: seed must be a non-negative integer, got {seed!r}.")
        self._tables: Dict[str, LocalTable] = {}
        for table in tables:
            if table.name in self._tables:
                raise ValueError(f"LocalReplay: two tables are named {table.name!r}.")
            self._tables[table.name] = LocalTable(table, seed=int(seed))

    @property
    def table_names(self) -> Tuple[str, ...]:
        return tuple(self._tables)

    def table(self, name: str) -> LocalTable:
        try:
            return self._tables[name]
        except KeyError:
            raise ValueError(f"There is no table {name!r}; the tables are {sorted(self._tables)}.") from None

    # The reverb.Client API.

    def trajectory_writer(self, num_keep_alive_refs: int) -> LocalTrajectoryWriter:
        """A writer whose items reference at most the last `num_keep_alive_refs` rows (see `LocalTrajectoryWriter`)."""
        return LocalTrajectoryWriter(self._tables, num_keep_alive_refs)

    def mutate_priorities(self, table: str, updates: Optional[Mapping[int, float]] = None,
                          deletes: Optional[Sequence[int]] = None) -> None:
        """Deletes the items `deletes`, then sets the priorities `updates` ({key: priority}); unknown keys are
        ignored, as in Reverb."""
        self.table(table).mutate_priorities(updates or {}, deletes or ())

    def reset(self, table: str) -> None:
        """Empties `table` and zeroes its rate limiter's counters."""
        self.table(table).reset()

    def server_info(self, timeout: Optional[float] = None) -> Dict[str, "reverb.reverb_types.TableInfo"]:
        """{name: TableInfo} as `reverb.Client.server_info` gives it (see `LocalTable.info`)."""
        del timeout
        return {name: table.info() for name, table in self._tables.items()}

    # Saving and restoring.

    def checkpoint(self) -> str:
        """Saves the replay into a new temporary directory and returns its path, as `reverb.Client.checkpoint`
        does (`acmelike.checkpointing.Checkpointer` moves it into the checkpoint it writes)."""
        directory = tempfile.mkdtemp(prefix="acmelike-local-replay-")
        try:
            self.save(directory)
        except BaseException:
            shutil.rmtree(directory, ignore_errors=True)
            raise
        return directory

    @staticmethod
    def checkpoint_sizes(directory: str) -> Dict[str, int]:
        """{table: items} of a replay `save`d to `directory`, read from its metadata only."""
        path = os.path.join(directory, STATE_FILE)
        try:
            with open(path) as file:
                return {meta["name"]: int(meta["size"]) for meta in json.load(file)["tables"]}
        except (OSError, ValueError, KeyError, TypeError) as error:
            raise ValueError(f"Cannot read the replay sizes from {path}: {error}") from error

    def save(self, directory: str) -> None:
        """Writes every table's state to `directory`/local_replay.json (metadata) and local_replay.npz (arrays)."""
        os.makedirs(directory, exist_ok=True)
        metas, arrays = [], {}
        for i, table in enumerate(self._tables.values()):
            meta, table_arrays = table.state()
            metas.append(meta)
            arrays.update({f"{i}.{name}": value for name, value in table_arrays.items()})
        with open(os.path.join(directory, ARRAYS_FILE), "wb") as file:
            np.savez(file, **arrays)
        with open(os.path.join(directory, STATE_FILE), "w") as file:
            json.dump({"format": _FORMAT, "tables": metas}, file)

    def restore(self, directory: str) -> None:
        """Replaces every table's contents with those `save` wrote to `directory`; the tables must be built as they
        were. A missing, corrupt or mismatched file raises a ValueError naming it, and then nothing is changed."""
        state_path = os.path.join(directory, STATE_FILE)
        arrays_path = os.path.join(directory, ARRAYS_FILE)
        try:
            with open(state_path) as file:
                state = json.load(file)
            metas = state["tables"]
            if state.get("format") != _FORMAT or [meta["name"] for meta in metas] != list(self._tables):
                raise ValueError(f"it holds tables {[meta['name'] for meta in metas]} in format "
                                 f"{state.get('format')!r}, expected {list(self._tables)} in {_FORMAT!r}")
        except (OSError, ValueError, KeyError, TypeError) as error:
            raise ValueError(f"Cannot restore the replay from {state_path}: {error}") from error
        try:
            with np.load(arrays_path, allow_pickle=False) as npz:
                arrays = {name: npz[name] for name in npz.files}
        except (OSError, ValueError, EOFError, zipfile.BadZipFile) as error:
            raise ValueError(f"Cannot restore the replay from {arrays_path}: {error!r}") from error
        appliers = []
        for i, (meta, table) in enumerate(zip(metas, self._tables.values())):
            prefix = f"{i}."
            table_arrays = {name[len(prefix):]: value for name, value in arrays.items() if name.startswith(prefix)}
            source = f"{state_path} and {arrays_path}"
            try:
                appliers.append(table._loaded(meta, table_arrays, source))
            except (KeyError, TypeError) as error:
                raise ValueError(f"{source}: table {table.name!r}: missing or malformed {error}") from error
        for apply in appliers:
            apply()


class LocalDataset(Iterator[ReplaySample]):
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
                f"LocalDataset: {self._table._why_not(self.batch_size)} The single-process runner calls "
                f"next() only when ready() is True."
            )
        return self._table.sample(self.batch_size)

    def close(self, timeout: Optional[float] = None) -> None:
        """Nothing to release (the signature of `Prefetcher.close`, which this stands in for)."""
        del timeout
