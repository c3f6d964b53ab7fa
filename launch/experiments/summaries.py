"""Episode statistics and the run summary built from them (the JSON line and summary.json of every runner)."""

import collections
import json
import os
from typing import Any, Dict, Mapping, Optional

from acmelike import core


class ReturnTracker(core.Saveable):
    """Keeps the last `window` episode returns and the first actor step at which their mean reached `threshold`
    (None: no threshold, nothing to reach). Saveable as JSON data, so a resumed run's summary carries on."""

    def __init__(self, window: int = 20, threshold: Optional[float] = None):
        self._returns = collections.deque(maxlen=window)
        self.window = window
        self.threshold = threshold
        self.episodes = 0
        self.steps_to_threshold: Optional[int] = None

    def add(self, episode_return: float, actor_steps: int) -> None:
        self._returns.append(float(episode_return))
        self.episodes += 1
        if (
            self.threshold is not None
            and self.steps_to_threshold is None
            and self.is_full
            and self.average >= self.threshold
        ):
            self.steps_to_threshold = int(actor_steps)

    def save(self) -> Dict[str, Any]:
        return {"returns": list(self._returns), "episodes": self.episodes, "steps_to_threshold": self.steps_to_threshold}

    def restore(self, state: Mapping[str, Any]) -> None:
        self._returns.clear()
        self._returns.extend(float(value) for value in state["returns"])
        self.episodes = int(state["episodes"])
        self.steps_to_threshold = state["steps_to_threshold"]

    @property
    def is_full(self) -> bool:
        return len(self._returns) == self.window

    @property
    def average(self) -> float:
        return sum(self._returns) / len(self._returns) if self._returns else float("nan")


def make_tracker(config) -> ReturnTracker:
    return ReturnTracker(window=config.return_window, threshold=config.threshold)


def _number(value: float) -> Optional[float]:
    return None if value != value else round(value, 2)  # NaN (no episode yet) is not JSON


def run_summary(
    config, tracker: ReturnTracker, counts: Mapping[str, Any], wall_seconds: float, **extra: Any
) -> Dict[str, Any]:
    """The summary of a run: agent, env, env_steps, wall_seconds, average_return_last_<N> (N = the tracker's
    window, also given as `return_window`), threshold and steps_to_threshold (the first actor step at which the
    average reached it; None if it never did or there is no threshold), steps_per_second, learner_steps, episodes,
    seed, the resolved agent config, then the runner's `extra` fields."""
    steps = int(counts.get("actor_steps", 0))
    return {
        "agent": config.agent_name,
        "env": config.environment_name,
        "env_steps": steps,
        "wall_seconds": round(wall_seconds, 2),
        f"average_return_last_{tracker.window}": _number(tracker.average),
        "return_window": tracker.window,
        "threshold": tracker.threshold,
        "steps_to_threshold": tracker.steps_to_threshold,
        "steps_per_second": round(steps / wall_seconds, 1) if wall_seconds > 0 else None,
        "learner_steps": int(counts.get("learner_steps", 0)),
        "episodes": tracker.episodes,
        "seed": config.seed,
        "config": config.agent_config_dict(),
        **extra,
    }


def average_return(summary: Mapping[str, Any]) -> Optional[float]:
    """The summary's `average_return_last_<N>`."""
    return summary[f"average_return_last_{summary['return_window']}"]


def write_summary(run_dir: str, summary: Mapping[str, Any]) -> None:
    with open(os.path.join(run_dir, "summary.json"), "w") as f:
        json.dump(summary, f, indent=2)
