"""Replay: the only home of Reverb and TensorFlow in acmelike (table factories, dataset iterators, prefetch), and
`LocalReplay`: the same tables held in-process, seeded, for reproducible single-process runs (`replay.local`)."""

# tfp's JAX substrate (rlax) must be loaded before TensorFlow or with it hidden; see acmelike._jax_probability.
from acmelike import _jax_probability  # noqa: F401

from acmelike.replay.dataset import ReplayDataset, make_dataset_iterator
from acmelike.replay.local import LocalDataset, LocalReplay
from acmelike.replay.prefetch import Prefetcher
from acmelike.replay.tables import (
    inserts_may_block,
    inserts_never_block,
    prioritized_table,
    queue_table,
    queue_rate_limiter,
    sample_to_insert_ratio,
    uniform_table,
)

__all__ = [
    "LocalDataset",
    "LocalReplay",
    "Prefetcher",
    "ReplayDataset",
    "inserts_may_block",
    "inserts_never_block",
    "make_dataset_iterator",
    "prioritized_table",
    "queue_rate_limiter",
    "queue_table",
    "sample_to_insert_ratio",
    "uniform_table",
]
