"""Reverb table and rate-limiter factories.

Every factory takes `insert_may_block` (see `ActorLearnerBuilder.make_replay_tables`): when False the rate
limiter never makes an insert wait, only sampling, so one thread can run both actor and learner.
"""

import sys

import reverb

# Reverb compares diffs as doubles; this makes the "inserts ahead of samples" side unbounded.
_UNBOUNDED = sys.float_info.max


def sample_to_insert_ratio(
    *, samples_per_insert: float, min_size_to_sample: int, error_buffer: float, insert_may_block: bool
) -> reverb.rate_limiters.RateLimiter:
    """Keeps samples/inserts near `samples_per_insert` once `min_size_to_sample` items are in the table.

    Sampling waits when the learner is more than `error_buffer` samples ahead of the target ratio; inserts wait
    when the actors are more than `error_buffer` samples behind it, unless `insert_may_block` is False.
    """
    if samples_per_insert <= 0:
        raise ValueError(f"samples_per_insert must be > 0, got {samples_per_insert}.")
    if min_size_to_sample < 1:
        raise ValueError(f"min_size_to_sample must be >= 1, got {min_size_to_sample}.")
    # The same offsets as reverb.rate_limiters.SampleToInsertRatio, with the insert side optionally unbounded.
    offset = samples_per_insert * min_size_to_sample
    min_diff = offset - error_buffer
    max_diff = offset + error_buffer if insert_may_block else _UNBOUNDED
    return reverb.rate_limiters.RateLimiter(
        samples_per_insert=samples_per_insert,
        min_size_to_sample=min_size_to_sample,
        min_diff=min_diff,
        max_diff=max_diff,
    )


def queue_rate_limiter(*, max_size: int, insert_may_block: bool) -> reverb.rate_limiters.RateLimiter:
    """Each item sampled once, in order: sampling waits for an item; inserts wait for room if allowed to."""
    return reverb.rate_limiters.RateLimiter(
        samples_per_insert=1.0,
        min_size_to_sample=1,
        min_diff=0.0,
        max_diff=float(max_size) if insert_may_block else _UNBOUNDED,
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


def queue_table(*, name: str, max_size: int, insert_may_block: bool, signature) -> reverb.Table:
    """A FIFO queue: every item is sampled exactly once, in insertion order (on-policy agents).

    When inserts may not block and the learner falls behind, the oldest items are dropped once `max_size` is
    reached rather than waiting.
    """
    return reverb.Table(
        name=name,
        sampler=reverb.selectors.Fifo(),
        remover=reverb.selectors.Fifo(),
        max_size=max_size,
        max_times_sampled=1,
        rate_limiter=queue_rate_limiter(max_size=max_size, insert_may_block=insert_may_block),
        signature=signature,
    )
