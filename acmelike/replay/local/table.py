"""LocalTable: one Reverb table in this process, seeded, with Reverb's samplers, remover and rate limiter.

Semantics are Reverb 0.7's (reverb/cc/rate_limiter.cc, table.cc, selectors/prioritized.cc), with one difference:
nothing here waits. Where Reverb would block (a sample or insert held back by the rate limiter, a sample from an
empty table) these raise `ReplayWouldBlock`, because in one thread nothing could ever release the wait. Ask
`can_sample` / `can_insert` first. One thread only: nothing here is locked.
"""

import collections
import dataclasses
import hashlib
from typing import Any, Dict, Iterable, List, Mapping, Optional, Tuple

import jax
import numpy as np

from acmelike.replay.local.rate_limiter import RateLimiter
from acmelike.replay.local.storage import Leaf, leaves_of_signature
from acmelike.replay.tables import TableSpec
from acmelike.types import ReplaySample, SampleInfo


@dataclasses.dataclass(frozen=True)
class TableInfo:
    """What `LocalReplay.server_info` reports of a table: the fields of `reverb.Client.server_info`'s TableInfo
    that adders, checkpoints and tests read."""

    name: str
    max_size: int
    max_times_sampled: int
    current_size: int
    signature: Any


class ReplayWouldBlock(RuntimeError):
    """A sample or insert that Reverb would make wait: in a single thread that wait could never end."""


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
    """A table (`TableSpec`) in this process: Reverb's sampling, removal and rate limiting, seeded, never waiting.

    Samplers: Uniform (with replacement, probability 1 / size), Prioritized (P(i) = w_i / sum w, w = priority **
    exponent, priority 0 never sampled unless all are 0, then uniform), Fifo (the oldest item, probability 1).
    Remover: Fifo; an insert into a full table first evicts the oldest item. Items whose times sampled reach
    `max_times_sampled` (> 0) are deleted as they are sampled, so a queue (Fifo sampler, max_times_sampled 1) hands
    out each item once, in insertion order. Evictions and such deletions count as deletes for the rate limiter.

    Items live in per-leaf arrays preallocated from the signature (`Leaf`); a batch is one fancy index per leaf.
    A key encodes the item's insertion number and its slot, `(number << slot_bits) | slot`: priority updates find
    their slots without a dictionary, and keys sort in insertion order. Keys are unique within a table.
    """

    def __init__(self, spec: TableSpec, *, seed: int):
        self.name = spec.name
        self.max_size = spec.max_size
        self._max_times_sampled = spec.max_times_sampled
        self._sampler = spec.sampler
        self._exponent = spec.priority_exponent
        limits = spec.rate_limiter
        self._limiter = RateLimiter(limits.samples_per_insert, limits.min_size_to_sample, limits.min_diff,
                                    limits.max_diff)
        self._signature = spec.signature  # its namedtuples (Transition, Step) are the samples' types
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
            self._treedef, self._leaves = leaves_of_signature(self._signature, self.max_size, self.name)

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
        return self.insert_leaves([np.asarray(leaf) for leaf in leaves], treedef, priority)

    def insert_leaves(self, values: List[np.ndarray], treedef, priority: float) -> int:
        """`insert` of an item already flattened, as the writer has it: its leaves as arrays, and `treedef` its
        structure (kept only by a table without signature)."""
        limiter = self._limiter
        if not limiter.can_insert(1):
            raise ReplayWouldBlock(
                f"Table {self.name!r}: the rate limiter holds this insert back ((inserts + 1) * samples_per_insert - "
                f"samples = {(limiter.inserts + 1) * limiter.samples_per_insert - limiter.samples} > max_diff="
                f"{limiter.max_diff}) until the learner samples more. In one thread nothing can sample meanwhile: "
                f"pass the tables through acmelike.replay.never_blocking_inserts()."
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

    def _learn(self, values: List[np.ndarray], treedef) -> List[Leaf]:
        """The leaves of a table without signature, from its first item (after a reset: from the next one)."""
        paths = [path for path, _ in jax.tree_util.tree_flatten_with_path(treedef.unflatten(values))[0]]
        self._treedef = treedef
        self._leaves = [
            Leaf(jax.tree_util.keystr(path), value.dtype, value.shape, self.max_size, learned=True)
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
            raise ReplayWouldBlock(self.why_cannot_sample(num_samples))
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

    def why_cannot_sample(self, num_samples: int) -> str:
        """Why `num_samples` cannot be sampled now: the limiter's figures, for error messages."""
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

    def info(self) -> TableInfo:
        """The table's name, sizes and signature, as `reverb.Client.server_info` gives them."""
        return TableInfo(self.name, self.max_size, self._max_times_sampled, self._size, self._signature)

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

    def checked_state(self, meta: dict, arrays: Mapping[str, np.ndarray], source: str):
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
