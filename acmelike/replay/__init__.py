"""Replay: the only home of Reverb and TensorFlow in acmelike (table factories, dataset iterators, prefetch)."""

# tfp's JAX substrate (rlax) must be loaded before TensorFlow or with it hidden; see acmelike._jax_probability.
from acmelike import _jax_probability  # noqa: F401

from acmelike.replay.dataset import make_dataset_iterator
from acmelike.replay.prefetch import Prefetcher
from acmelike.replay.tables import (
    prioritized_table,
    queue_table,
    queue_rate_limiter,
    sample_to_insert_ratio,
    uniform_table,
)

__all__ = [
    "Prefetcher",
    "make_dataset_iterator",
    "prioritized_table",
    "queue_rate_limiter",
    "queue_table",
    "sample_to_insert_ratio",
    "uniform_table",
]
