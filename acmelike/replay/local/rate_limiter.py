"""RateLimiter: the verdicts of Reverb's rate limiter, which a LocalTable asks before each insert and sample."""


class RateLimiter:
    """Reverb's RateLimiter (reverb/cc/rate_limiter.cc) without the waiting: counters since creation or reset.

    Evictions and items deleted after max_times_sampled count as deletes. The arithmetic is Reverb's, in the same
    order and in doubles, so both give the same verdicts for the same counters.
    """

    __slots__ = ("samples_per_insert", "min_size_to_sample", "min_diff", "max_diff", "inserts", "samples", "deletes")

    def __init__(self, samples_per_insert: float, min_size_to_sample: int, min_diff: float, max_diff: float):
        self.samples_per_insert = samples_per_insert
        self.min_size_to_sample = min_size_to_sample
        self.min_diff = min_diff
        self.max_diff = max_diff
        self.inserts = self.samples = self.deletes = 0

    def can_sample(self, num_samples: int) -> bool:
        if self.inserts - self.deletes < self.min_size_to_sample:
            return False
        return self.inserts * self.samples_per_insert - self.samples - num_samples >= self.min_diff

    def can_insert(self, num_inserts: int) -> bool:
        if self.inserts + num_inserts - self.deletes <= self.min_size_to_sample:  # free until the minimum size
            return True
        return (num_inserts + self.inserts) * self.samples_per_insert - self.samples <= self.max_diff

    def config(self) -> dict:
        return {"samples_per_insert": self.samples_per_insert, "min_size_to_sample": self.min_size_to_sample,
                "min_diff": self.min_diff, "max_diff": self.max_diff}
