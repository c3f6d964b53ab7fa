"""Episode statistics and the run summary built from them (the JSON line and summary.json of every runner), and
the summary of a run that an error ended (`failed_summary`, for every mode)."""

import collections
import errno
import os
import re
import shutil
import sys
from typing import Any, Dict, Mapping, Optional

from acmelike import core, files
from launch.lifecycle.run_directory import READ_ONLY_ERRNOS, latest_run_checkpoint, record_failure


class ReturnTracker(core.Saveable):
    """Keeps the last `window` episode returns and the first actor step at which their mean reached `threshold`
    (None: no threshold, nothing to reach), and for a multi-agent run each agent's last `window` returns beside the
    team's. Saveable as JSON data, so a resumed run's summary carries on."""

    def __init__(self, window: int = 20, threshold: Optional[float] = None):
        self._returns = collections.deque(maxlen=window)
        self.window = window
        self.threshold = threshold
        self.episodes = 0
        self.steps_to_threshold: Optional[int] = None
        self._agent_returns: Dict[str, collections.deque] = {}

    def add(self, episode_return: float, actor_steps: int, per_agent: Optional[Mapping[str, float]] = None) -> None:
        """`episode_return`: the episode's (a multi-agent episode's team return); `per_agent`: each agent's, by
        agent id (`agent_returns(result)` reads them off an episode's result or CSV row)."""
        self._returns.append(float(episode_return))
        for agent, value in (per_agent or {}).items():
            self._agent_returns.setdefault(agent, collections.deque(maxlen=self.window)).append(float(value))
        self.episodes += 1
        if (
            self.threshold is not None
            and self.steps_to_threshold is None
            and self.is_full
            and self.average >= self.threshold
        ):
            self.steps_to_threshold = int(actor_steps)

    def save(self) -> Dict[str, Any]:
        return {"returns": list(self._returns), "episodes": self.episodes, "steps_to_threshold": self.steps_to_threshold,
                "agent_returns": {agent: list(values) for agent, values in self._agent_returns.items()}}

    def restore(self, state: Mapping[str, Any]) -> None:
        self._returns.clear()
        self._returns.extend(float(value) for value in state["returns"])
        self.episodes = int(state["episodes"])
        self.steps_to_threshold = state["steps_to_threshold"]
        # A checkpoint written before per-agent returns were kept has none.
        self._agent_returns = {
            agent: collections.deque((float(value) for value in values), maxlen=self.window)
            for agent, values in state.get("agent_returns", {}).items()
        }

    @property
    def is_full(self) -> bool:
        return len(self._returns) == self.window

    @property
    def average(self) -> float:
        return sum(self._returns) / len(self._returns) if self._returns else float("nan")

    @property
    def agent_averages(self) -> Dict[str, float]:
        """Each agent's average over its last `window` returns (empty for a single-agent run)."""
        return {agent: sum(values) / len(values) for agent, values in self._agent_returns.items()}


def agent_returns(result: Mapping[str, Any]) -> Dict[str, float]:
    """Each agent's return in an episode's result (or a CSV row of them): its `episode_return/<agent id>` columns
    (`environment_loops.EnvironmentLoop`'s per-agent returns); empty for one agent."""
    prefix = "episode_return/"
    return {key[len(prefix):]: float(value) for key, value in result.items()
            if key.startswith(prefix) and value not in ("", None)}  # a CSV cell may be empty


def make_tracker(config) -> ReturnTracker:
    return ReturnTracker(window=config.return_window, threshold=config.target_return)


def _number(value: float) -> Optional[float]:
    return None if value != value else round(value, 2)  # NaN (no episode yet) is not JSON


def summary_identity(config) -> Dict[str, Any]:
    """What names a run in its summary (`run_summary`'s `identity`): agent, env, seed and the resolved agent config
    of an `ExperimentConfig` or `OfflineExperimentConfig`, and its `action_repeat` where it repeats actions (its
    step counts are then the agent's steps, each that many environment steps)."""
    repeat = {"action_repeat": config.action_repeat} if config.action_repeat != 1 else {}
    return {"agent": config.agent, "env": config.environment, "seed": config.seed, **repeat,
            "config": config.agent_config_dict()}


def repeat_note(action_repeat: int) -> str:
    """A progress line's closing note where a run repeats actions (`--action-repeat K`, K > 1): its step counts are
    the agent's steps, each K environment steps; "" where it does not."""
    if action_repeat == 1:
        return ""
    return f" | each step {action_repeat} environment steps (--action-repeat {action_repeat})"


def run_summary(
    identity: Mapping[str, Any], tracker: ReturnTracker, counts: Mapping[str, Any], wall_seconds: float, **extra: Any
) -> Dict[str, Any]:
    """The summary of a run: agent, env, env_steps, wall_seconds, average_return_last_<N> (N = the tracker's
    window, also given as `return_window`), threshold and steps_to_threshold (the first actor step at which the
    average reached it; None if it never did or there is no threshold), for a multi-agent run each agent's
    `average_return_last_<N>/<agent id>` (the team's is the sum), steps_per_second, learner_steps, episodes, seed,
    action_repeat (only where the run repeats actions), the resolved agent config, failed (false: `failed_summary`
    makes the summary of a run an error ended), then the runner's `extra` fields. `identity` names the run
    (`summary_identity`): agent, env, seed, config."""
    steps = int(counts.get("actor_steps", 0))
    return {
        "agent": identity["agent"],
        "env": identity["env"],
        "env_steps": steps,
        "wall_seconds": round(wall_seconds, 2),
        f"average_return_last_{tracker.window}": _number(tracker.average),
        **{f"average_return_last_{tracker.window}/{agent}": _number(value)
           for agent, value in tracker.agent_averages.items()},
        "return_window": tracker.window,
        "threshold": tracker.threshold,
        "steps_to_threshold": tracker.steps_to_threshold,
        "steps_per_second": round(steps / wall_seconds, 1) if wall_seconds > 0 else None,
        "learner_steps": int(counts.get("learner_steps", 0)),
        "episodes": tracker.episodes,
        "seed": identity["seed"],
        **({"action_repeat": identity["action_repeat"]} if "action_repeat" in identity else {}),
        "config": identity["config"],
        "failed": False,
        **extra,
    }


def average_return(summary: Mapping[str, Any]) -> Optional[float]:
    """The summary's `average_return_last_<N>`."""
    return summary[f"average_return_last_{summary['return_window']}"]


def write_summary(run_dir: str, summary: Mapping[str, Any]) -> None:
    """`<run_dir>/summary.json`, replaced whole: a disk that fills up part way leaves the previous one (or none),
    never a truncated one."""
    files.write_json(os.path.join(run_dir, "summary.json"), summary)


def failed_summary(known: Mapping[str, Any], error: BaseException, run_dir: Optional[str], *,
                   recorded: bool = False) -> Dict[str, Any]:
    """The summary of a run that `error` ended, in any mode: `known` (the runner's summary if it made one, else what
    identifies the run: agent, env, launch, seed, ...) with `"failed": true`, `"error": "<type>: <message>"` (its
    first line, with what to do about a full or read-only disk), `checkpoint` (the newest complete one, which
    `--resume` continues from; None) and the error among `failures`, its traceback in
    `<run_dir>/failures/run.txt` (`record_failure`; `recorded`: a distributed program's nodes wrote theirs).

    Written to `<run_dir>/summary.json` if the directory takes it; if not (read-only, full), standard error says
    so, and the summary the command line prints is the only one.
    """
    message = (str(error).strip().splitlines() or [""])[0]
    summary = {
        **known,
        "failed": True,
        "error": f"{type(error).__name__}: {message}{_disk_advice(error, run_dir)}",
        "checkpoint": _newest_checkpoint(run_dir),
    }
    failures = list(known.get("failures", []))
    if not recorded:
        failures.append(record_failure(run_dir, "run", "the run failed", error))
    summary["failures"] = failures
    if run_dir:
        try:
            write_summary(run_dir, summary)
        except OSError as write_error:
            read_only = write_error.errno in READ_ONLY_ERRNOS
            why = f"the directory is read-only ({write_error})" if read_only else write_error
            print(f"[acmelike] summary.json was not written to {run_dir}: {why}. The summary is the last line of "
                  f"standard output only.", file=sys.stderr, flush=True)
    return summary


def _newest_checkpoint(run_dir: Optional[str]) -> Optional[str]:
    try:
        return latest_run_checkpoint(run_dir) if run_dir and os.path.isdir(run_dir) else None
    except OSError:  # a directory that cannot be listed: the summary still goes out
        return None


def _disk_advice(error: BaseException, run_dir: Optional[str]) -> str:
    """What to do about a disk that is full or will not be written (an OSError saying so, or one that caused
    `error`: a library may wrap it), else ''."""
    code, path = _errno_and_path(error)
    if not run_dir or code not in (errno.ENOSPC, errno.EDQUOT, *READ_ONLY_ERRNOS):
        return ""
    path = path or run_dir
    latest = _newest_checkpoint(run_dir)
    resume = (f"continue with `python -m launch --resume {run_dir}` (from {latest})" if latest else
              "start the run again (--overwrite replaces what it wrote)")
    if code in READ_ONLY_ERRNOS:
        return f" ({run_dir} is read-only here: make it writable, or copy the run elsewhere; then {resume})."
    free = shutil.disk_usage(_existing(path)).free
    needed = f"; a checkpoint of this run takes {_megabytes(_size(latest))}" if latest else ""
    return (f" ({_megabytes(free)} free on the filesystem of {path}{needed}: free space there, or move the run "
            f"directory to a larger disk; then {resume}).")


def _errno_and_path(error: Optional[BaseException]):
    """(errno, the path it names or None) of `error` or of an error that caused it; where a library kept only the
    text (shutil.Error's list of failed copies, tensorstore's "[OS error 28: ENOSPC ...]" or, in newer versions,
    "[os_error_code='28']"), the number in it.
    (None, None) if none says."""
    while error is not None:
        if getattr(error, "errno", None) is not None:
            return error.errno, getattr(error, "filename", None)
        found = re.search(r"\[(?:Errno |OS error |os_error_code=')(\d+)", str(error))
        if found:
            return int(found.group(1)), None
        error = error.__cause__ or error.__context__
    return None, None


def _existing(path: str) -> str:
    while not os.path.exists(path) and os.path.dirname(path) != path:
        path = os.path.dirname(path)
    return path


def _size(directory: str) -> int:
    return sum(os.path.getsize(os.path.join(root, name)) for root, _, names in os.walk(directory) for name in names)


def _megabytes(size: int) -> str:
    return f"{size / 1e6:.1f} MB"
