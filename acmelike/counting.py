"""Counter: thread-safe named counts (steps, episodes, ...), optionally feeding a parent counter.

    root = Counter()                                   # e.g. the counter node of a distributed program
    actor_counter = Counter(root, prefix="actor")      # one per actor
    actor_counter.increment(steps=200, episodes=1)     # -> {"actor_steps": 200, "actor_episodes": 1, ...}

A child counter forwards its increments to its parent under prefixed keys (`<prefix>_<key>`), batched: at
most once every `time_delta` seconds (the first increment always goes through), so a remote parent is not
called on every step. What it returns is the parent's counts as of the last forward (which include every
other child's increments up to then) plus this counter's increments not yet forwarded: the counts a child
reports lag other children's by at most `time_delta`, never its own. Call `flush()` to forward now (e.g.
when an actor stops). A counter without a parent just keeps totals (prefixed too, if a prefix is given).

Counters are `Saveable`: a checkpoint holds the root counter's totals, and a restored run counts on from them.
"""

import threading
import time
from typing import Callable, Optional, Union

from acmelike import core

Number = Union[int, float]


def _prefixed(counts: dict, prefix: str) -> dict:
    if not prefix:
        return dict(counts)
    return {f"{prefix}_{key}": value for key, value in counts.items()}


class Counter(core.Saveable):
    """Named counts, safe to increment from several threads.

    Args:
      parent: a counter (or a handle to a remote one) with `increment(**counts) -> dict` and `get_counts()`.
      prefix: prepended as `<prefix>_` to the keys this counter reports and forwards.
      time_delta: minimum seconds between two forwards to the parent.
      clock: seconds as a float, for tests; `time.monotonic` by default.
    """

    def __init__(
        self,
        parent: Optional["Counter"] = None,
        prefix: str = "",
        time_delta: float = 1.0,
        clock: Callable[[], float] = time.monotonic,
    ):
        self._parent = parent
        self._prefix = prefix
        self._time_delta = time_delta
        self._clock = clock
        self._lock = threading.Lock()
        self._counts: dict[str, Number] = {}  # without a parent: totals; with one: not yet forwarded
        self._parent_counts: Optional[dict] = None  # the parent's counts at the last forward
        self._last_forward = -float("inf")

    def increment(self, **counts: Number) -> dict:
        """Adds `counts` and returns all counts (see the module docstring for what a child returns)."""
        with self._lock:
            for key, value in counts.items():
                self._counts[key] = self._counts.get(key, 0) + value
            if self._parent is not None and self._clock() - self._last_forward >= self._time_delta:
                self._forward()
            return self._get_counts()

    def flush(self) -> dict:
        """Forwards pending increments to the parent now; returns all counts."""
        with self._lock:
            if self._parent is not None:
                self._forward()
            return self._get_counts()

    def get_counts(self) -> dict:
        """All counts: own (prefixed) and, with a parent, the parent's as of the last forward."""
        with self._lock:
            if self._parent is not None and self._parent_counts is None:
                self._parent_counts = dict(self._parent.get_counts())
            return self._get_counts()

    def _forward(self) -> None:
        # Called with the lock held. Lock order is always child -> parent, so there is no deadlock.
        pending = _prefixed(self._counts, self._prefix)
        self._parent_counts = dict(self._parent.increment(**pending))
        self._counts = {}
        self._last_forward = self._clock()

    def _get_counts(self) -> dict:
        counts = _prefixed(self._counts, self._prefix)
        if self._parent_counts:
            for key, value in self._parent_counts.items():
                counts[key] = counts.get(key, 0) + value
        return counts

    def save(self) -> dict:
        """This counter's own totals, unprefixed (a child forwards what is pending first, so it saves {})."""
        with self._lock:
            if self._parent is not None:
                self._forward()
            return dict(self._counts)

    def restore(self, state: dict) -> None:
        """Continues from `save()`'s totals: a restored root counter reports them plus what is counted later."""
        with self._lock:
            self._counts = dict(state)
            self._parent_counts = None
