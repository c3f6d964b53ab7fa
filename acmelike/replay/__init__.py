"""Replay: tables described as plain data (`tables`), `LocalReplay`, the same tables held in-process and seeded for
reproducible single-process runs (`replay.local`), dataset iterators and prefetch.

Importing this package imports neither Reverb nor TensorFlow: only the Reverb backend does, where a Reverb server
runs (`reverb_tables.to_reverb_table`) or is read (`ReplayDataset`, which imports them when one is built).
"""

# tfp's JAX substrate (rlax) must be loaded before TensorFlow or with it hidden; see acmelike._jax_probability.
from acmelike import _jax_probability  # noqa: F401

from acmelike.replay.dataset import ReplayDataset, make_dataset_iterator
from acmelike.replay.local import LocalDataset, LocalFormatReplay, LocalReplay
from acmelike.replay.prefetch import Prefetcher
from acmelike.replay.tables import (
    ArraySpec,
    RateLimiterSpec,
    TableSpec,
    min_size,
    never_blocking_inserts,
    prioritized_table,
    queue_table,
    queue_rate_limiter,
    sample_to_insert_ratio,
    uniform_table,
)

__all__ = [
    "ArraySpec",
    "LocalDataset",
    "LocalFormatReplay",
    "LocalReplay",
    "Prefetcher",
    "RateLimiterSpec",
    "ReplayDataset",
    "TableSpec",
    "make_dataset_iterator",
    "min_size",
    "never_blocking_inserts",
    "prioritized_table",
    "queue_rate_limiter",
    "queue_table",
    "sample_to_insert_ratio",
    "uniform_table",
]
