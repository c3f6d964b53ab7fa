"""Episode statistics and the run summary built from them (the JSON line and summary.json of every runner)."""

import collections
import json
import os
from typing import Any, Dict, Mapping, Optional


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


def run_summary(
    config, tracker: ReturnTracker, counts: Mapping[str, Any], wall_seconds: float, **extra: Any
) -> Dict[str, Any]:
    """The summary of a finished run: agent, env, env_steps, wall_seconds, average_return_last_20, steps_to_475,
    steps_per_second, learner_steps, episodes, seed, then the runner's `extra` fields."""
    steps = int(counts.get("actor_steps", 0))
    return {
        "agent": config.agent_name,
        "env": config.environment_name,
        "env_steps": steps,
        "wall_seconds": round(wall_seconds, 2),
        "average_return_last_20": round(tracker.average, 2),
        "steps_to_475": tracker.steps_to_threshold,
        "steps_per_second": round(steps / wall_seconds, 1),
        "learner_steps": int(counts.get("learner_steps", 0)),
        "episodes": tracker.episodes,
        "seed": config.seed,
        **extra,
    }


def write_summary(run_dir: str, summary: Mapping[str, Any]) -> None:
    with open(os.path.join(run_dir, "summary.json"), "w") as f:
        json.dump(summary, f, indent=2)
