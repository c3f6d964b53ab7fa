"""ReturnTracker: the moving average of episode returns that progress lines and summaries report."""

import collections
from typing import Optional


class ReturnTracker:
    """Keeps the last `window` episode returns and the first actor step at which their mean reached `threshold`."""

    def __init__(self, window: int = 20, threshold: float = 475.0):
        self._returns = collections.deque(maxlen=window)
        self._window = window
        self.threshold = threshold
        self.episodes = 0
        self.steps_to_threshold: Optional[int] = None

    def add(self, episode_return: float, actor_steps: int) -> None:
        self._returns.append(float(episode_return))
        self.episodes += 1
        if self.steps_to_threshold is None and self.is_full and self.average >= self.threshold:
            self.steps_to_threshold = int(actor_steps)

    @property
    def is_full(self) -> bool:
        return len(self._returns) == self._window

    @property
    def average(self) -> float:
        return sum(self._returns) / len(self._returns) if self._returns else float("nan")
