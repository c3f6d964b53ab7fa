"""Replay tables described as plain data: what a builder's `make_replay_tables` returns, with no Reverb in sight.

A `TableSpec` names a table's sampler, remover, sizes, rate limiter (`RateLimiterSpec`) and item signature (a nest
of `ArraySpec`s: numpy shapes and dtypes). The in-process `acmelike.replay.local.LocalReplay` is built from these
directly; only a run that starts a Reverb server turns them into `reverb.Table`s
(`acmelike.replay.reverb_tables.to_reverb_table`), so a single-process run imports neither Reverb nor TensorFlow.

Whether a rate limiter may make an insert wait is the runner's choice, not the agent's: a runner that acts and
learns in one thread passes the builder's tables through `never_blocking_inserts`, whose rate limiters only ever
hold back sampling (a blocked insert would wait on its own thread forever). Builders describe their tables the
same way under every runner.

    tables = never_blocking_inserts(builder.make_replay_tables(environment_spec=spec, policy=policy))
"""

import dataclasses
import sys
from typing import Any, Optional, Sequence, Tuple

import numpy as np

# Reverb compares diffs as doubles; this makes the "inserts ahead of samples" side unbounded.
_UNBOUNDED = sys.float_info.max

SAMPLERS = ("uniform", "prioritized", "fifo")
REMOVERS = ("fifo",)


@dataclasses.dataclass(frozen=True)
class ArraySpec:
    """One leaf of a table's item signature: a shape (a None dimension: any size) and a numpy dtype.

    Neither `jax.ShapeDtypeStruct` (JAX >= 0.7) nor `dm_env.specs.Array` allows a None dimension, which variable
    length sequences need, hence this. It is a leaf of `jax.tree_util` nests.
    """

    shape: Tuple[Optional[int], ...]
    dtype: np.dtype

    def __post_init__(self):
        object.__setattr__(self, "shape", tuple(None if dim is None else int(dim) for dim in self.shape))
        object.__setattr__(self, "dtype", np.dtype(self.dtype))

    @classmethod
    def of(cls, spec, dtype=None, time_dim: Any = "none") -> "ArraySpec":
        """From anything with a shape and a dtype (a dm_env spec, an array, a `tf.TensorSpec` with known rank),
        with `dtype` instead of its own if given and a leading `time_dim` (an int or None) unless left "none"."""
        shape = spec.shape
        if hasattr(shape, "as_list"):  # a tf.TensorShape, read without importing TensorFlow
            shape = shape.as_list()
        dtype = dtype if dtype is not None else spec.dtype
        dtype = getattr(dtype, "as_numpy_dtype", dtype)  # a tf.DType
        return cls(tuple(shape) if time_dim == "none" else (time_dim, *shape), dtype)


@dataclasses.dataclass(frozen=True)
class RateLimiterSpec:
    """Reverb's RateLimiter (reverb/cc/rate_limiter.cc): sampling waits until `min_size_to_sample` items are in and
    while inserts * samples_per_insert - samples < min_diff; inserts wait while that exceeds max_diff."""

    samples_per_insert: float
    min_size_to_sample: int
    min_diff: float
    max_diff: float


@dataclasses.dataclass(frozen=True)
class TableSpec:
    """A replay table: how items are sampled and removed, how many it holds, its rate limiter and item signature.

    sampler: "uniform", "prioritized" (P(i) proportional to priority_i ** priority_exponent) or "fifo"; remover:
    "fifo" (a full table evicts its oldest item). Items sampled `max_times_sampled` times (> 0) are deleted.
    `signature` is a nest of `ArraySpec`s (its namedtuples are the types of sampled items), or None: the first item
    fixes the structure.
    """

    name: str
    sampler: str
    max_size: int
    rate_limiter: RateLimiterSpec
    signature: Any = None
    priority_exponent: float = 0.0
    remover: str = "fifo"
    max_times_sampled: int = 0

    def __post_init__(self):
        if self.sampler not in SAMPLERS or self.remover not in REMOVERS:
            raise ValueError(f"Table {self.name!r}: the sampler must be one of {list(SAMPLERS)} and the remover one of "
                             f"{list(REMOVERS)}, got sampler {self.sampler!r} and remover {self.remover!r}.")
        if self.max_size < 1 or self.max_times_sampled < 0:
            raise ValueError(f"Table {self.name!r}: max_size must be >= 1 and max_times_sampled >= 0, got "
                             f"{self.max_size} and {self.max_times_sampled}.")


def never_blocking_inserts(tables: Sequence[TableSpec]) -> list:
    """`tables` with rate limiters that never make an insert wait, only sampling: for runners that act and learn
    in one thread, where a blocked insert would wait forever."""
    return [dataclasses.replace(table, rate_limiter=dataclasses.replace(table.rate_limiter, max_diff=_UNBOUNDED))
            for table in tables]


def sample_to_insert_ratio(*, samples_per_insert: float, min_size_to_sample: int, error_buffer: float) -> RateLimiterSpec:
    """Keeps samples/inserts near `samples_per_insert` once `min_size_to_sample` items are in the table.

    Sampling waits when the learner is more than `error_buffer` samples ahead of the target ratio; inserts wait
    when the actors are more than `error_buffer` samples behind it (see `never_blocking_inserts`).
    """
    if samples_per_insert <= 0:
        raise ValueError(f"samples_per_insert must be > 0, got {samples_per_insert}.")
    if min_size_to_sample < 1:
        raise ValueError(f"min_size_to_sample must be >= 1, got {min_size_to_sample}.")
    # The same offsets as reverb.rate_limiters.SampleToInsertRatio.
    offset = samples_per_insert * min_size_to_sample
    return RateLimiterSpec(samples_per_insert=samples_per_insert, min_size_to_sample=min_size_to_sample,
                           min_diff=offset - error_buffer, max_diff=offset + error_buffer)


def min_size(min_size_to_sample: int) -> RateLimiterSpec:
    """Sampling waits until `min_size_to_sample` items are in; nothing else is limited (reverb's MinSize)."""
    return RateLimiterSpec(samples_per_insert=1.0, min_size_to_sample=min_size_to_sample, min_diff=-_UNBOUNDED,
                           max_diff=_UNBOUNDED)


def queue_rate_limiter(*, max_size: int) -> RateLimiterSpec:
    """Each item sampled once, in order: sampling waits for an item; inserts wait for room."""
    return RateLimiterSpec(samples_per_insert=1.0, min_size_to_sample=1, min_diff=0.0, max_diff=float(max_size))


def uniform_table(*, name: str, max_size: int, rate_limiter: RateLimiterSpec, signature) -> TableSpec:
    """Uniform experience replay, oldest items removed first."""
    return TableSpec(name=name, sampler="uniform", max_size=max_size, rate_limiter=rate_limiter, signature=signature)


def prioritized_table(
    *, name: str, max_size: int, priority_exponent: float, rate_limiter: RateLimiterSpec, signature
) -> TableSpec:
    """Prioritized replay (Schaul et al., 2015): P(i) proportional to priority_i ** priority_exponent."""
    return TableSpec(name=name, sampler="prioritized", priority_exponent=float(priority_exponent), max_size=max_size,
                     rate_limiter=rate_limiter, signature=signature)


def queue_table(*, name: str, max_size: int, signature) -> TableSpec:
    """A FIFO queue: every item is sampled exactly once, in insertion order (on-policy agents).

    With `never_blocking_inserts`, when the learner falls behind, the oldest items are dropped once `max_size` is
    reached rather than waiting.
    """
    return TableSpec(name=name, sampler="fifo", max_size=max_size, max_times_sampled=1,
                     rate_limiter=queue_rate_limiter(max_size=max_size), signature=signature)
