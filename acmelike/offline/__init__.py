"""Offline data: Minari datasets as the `ReplaySample` batches Reverb gives learners (no Reverb, no TensorFlow)."""

from acmelike.offline.minari_dataset import DatasetSpaceError, MinariIterator, check_dataset_fits, load_transitions

__all__ = ["DatasetSpaceError", "MinariIterator", "check_dataset_fits", "load_transitions"]
