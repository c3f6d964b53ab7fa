"""The Reverb backend's tables: a `reverb.Table` from a `TableSpec`, made only where a Reverb server runs.

This module imports Reverb and TensorFlow; nothing a single-process run with the local replay loads imports it.
"""

import jax
import reverb
import tensorflow as tf

from acmelike.replay.tables import ArraySpec, TableSpec


def _tensor_spec(spec: ArraySpec) -> tf.TensorSpec:
    return tf.TensorSpec(shape=spec.shape, dtype=spec.dtype)


def to_reverb_table(spec: TableSpec) -> reverb.Table:
    """The `reverb.Table` `spec` describes: the same sampler, remover, sizes, rate limiter and signature (as
    `tf.TensorSpec`s, in the same nest: sampled items keep the builder's namedtuples)."""
    samplers = {
        "uniform": reverb.selectors.Uniform,
        "fifo": reverb.selectors.Fifo,
        "prioritized": lambda: reverb.selectors.Prioritized(spec.priority_exponent),
    }
    limiter = spec.rate_limiter
    return reverb.Table(
        name=spec.name,
        sampler=samplers[spec.sampler](),
        remover={"fifo": reverb.selectors.Fifo}[spec.remover](),
        max_size=spec.max_size,
        max_times_sampled=spec.max_times_sampled,
        rate_limiter=reverb.rate_limiters.RateLimiter(
            samples_per_insert=limiter.samples_per_insert, min_size_to_sample=limiter.min_size_to_sample,
            min_diff=limiter.min_diff, max_diff=limiter.max_diff),
        signature=None if spec.signature is None else jax.tree_util.tree_map(_tensor_spec, spec.signature),
    )
