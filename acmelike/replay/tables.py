"""Reverb table and rate-limiter factories.

Whether a rate limiter may make an insert wait is the runner's choice, not the agent's: a runner that acts and
learns in one thread builds its tables inside `inserts_never_block()`, and every factory here then gives a rate
limiter that only ever holds back sampling (a blocked insert would wait on its own thread forever). Builders
call the factories the same way under every runner.

    with inserts_never_block():
        tables = builder.make_replay_tables(environment_spec=spec, policy=policy)
"""

import contextlib
import contextvars
import sys

import reverb

# Reverb compares diffs as doubles; this makes the "inserts ahead of samples" side unbounded.
_UNBOUNDED = sys.float_info.max

_INSERTS_MAY_BLOCK = contextvars.ContextVar("acmelike_inserts_may_block", default=True)


@contextlib.contextmanager
def inserts_never_block():
    """Within this block, the rate limiters made here never make an insert wait (single-threaded runners)."""
    token = _INSERTS_MAY_BLOCK.set(False)
    try:
        yield
    finally:
        _INSERTS_MAY_BLOCK.reset(token)


def inserts_may_block() -> bool:
    """Whether rate limiters made now may hold back inserts (False inside `inserts_never_block()`)."""
    return _INSERTS_MAY_BLOCK.get()


def sample_to_insert_ratio(
    *, samples_per_insert: float, min_size_to_sample: int, error_buffer: float
) -> reverb.rate_limiters.RateLimiter:
    """Keeps samples/inserts near `samples_per_insert` once `min_size_to_sample` items are in the table.

    Sampling waits when the learner is more than `error_buffer` samples ahead of the target ratio; inserts wait
    when the actors are more than `error_buffer` samples behind it, unless inside `inserts_never_block()`.
    """
    if samples_per_insert <= 0:
        raise ValueError(f"samples_per_insert must be > 0, got {samples_per_insert}.")
    if min_size_to_sample < 1:
        raise ValueError(f"min_size_to_sample must be >= 1, got {min_size_to_sample}.")
    # The same offsets as reverb.rate_limiters.SampleToInsertRatio, with the insert side optionally unbounded.
    offset = samples_per_insert * min_size_to_sample
    min_diff = offset - error_buffer
    max_diff = offset + error_buffer if inserts_may_block() else _UNBOUNDED
    return reverb.rate_limiters.RateLimiter(
        samples_per_insert=samples_per_insert,
        min_size_to_sample=min_size_to_sample,
        min_diff=min_diff,
        max_diff=max_diff,
    )


def queue_rate_limiter(*, max_size: int) -> reverb.rate_limiters.RateLimiter:
    """Each item sampled once, in order: sampling waits for an item; inserts wait for room if they may block."""
    return reverb.rate_limiters.RateLimiter(
        samples_per_insert=1.0,
        min_size_to_sample=1,
        min_diff=0.0,
        max_diff=float(max_size) if inserts_may_block() else _UNBOUNDED,
    )


def uniform_table(
    *, name: str, max_size: int, rate_limiter: reverb.rate_limiters.RateLimiter, signature
) -> reverb.Table:
    """Uniform experience replay, oldest items removed first."""
    return reverb.Table(
        name=name,
        sampler=reverb.selectors.Uniform(),
        remover=reverb.selectors.Fifo(),
        max_size=max_size,
        rate_limiter=rate_limiter,
        signature=signature,
    )


def prioritized_table(
    *, name: str, max_size: int, priority_exponent: float, rate_limiter: reverb.rate_limiters.RateLimiter, signature
) -> reverb.Table:
    """Prioritized replay (Schaul et al., 2015): P(i) proportional to priority_i ** priority_exponent."""
    return reverb.Table(
        name=name,
        sampler=reverb.selectors.Prioritized(priority_exponent),
        remover=reverb.selectors.Fifo(),
        max_size=max_size,
        rate_limiter=rate_limiter,
        signature=signature,
    )


def queue_table(*, name: str, max_size: int, signature) -> reverb.Table:
    """A FIFO queue: every item is sampled exactly once, in insertion order (on-policy agents).

    Inside `inserts_never_block()`, when the learner falls behind, the oldest items are dropped once `max_size` is
    reached rather than waiting.
    """
    return reverb.Table(
        name=name,
        sampler=reverb.selectors.Fifo(),
        remover=reverb.selectors.Fifo(),
        max_size=max_size,
        max_times_sampled=1,
        rate_limiter=queue_rate_limiter(max_size=max_size),
        signature=signature,
    )
