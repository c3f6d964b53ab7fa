"""One cell of a suite: the command that trains it, in a fresh process, and the record it leaves.

A cell is the documented command line, so a user gets the same numbers with the same flags:

    python -m launch --agent A --env T --steps N --seed S --preset P --replay local --return-window W --run-dir D
    python -m launch --agent A --env gymnax/T --launch anakin --seeds 0,1,2,3,4 --steps N --preset P ...  (anakin)

A row `<agent>@anakin` of a single-process suite runs the second way (`Suite.launch_of`). An Anakin group trains
the missing seeds of an (agent, task) in one vmapped call (a `CellGroup`); each seed still gets its own record.
The record (`seed_<n>.json`) holds the curve (the average of the last `return_window` episode returns on a grid
of environment steps), the final and best such average (best over full windows only), the averages at the
references' step counts (within the budget), steps, wall and CPU seconds, the command, the commit, package
versions and the machine; where the suite asks for it (`Suite.eval_episodes`), also the final
policy's returns without exploration (`greedy`), from `python -m launch.cli.evaluate` in a fresh process.
"""

import csv
import dataclasses
import datetime
import json
import os
import signal
import subprocess
import sys
import time
from importlib import metadata
from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple

import numpy as np

from acmelike import files
from benchmarks.common import machine_info
from benchmarks.results_runner.suites import Suite, Task

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CURVE_POINTS = 100
PACKAGES = ("jax", "jaxlib", "flax", "optax", "rlax", "chex", "numpy", "gymnasium", "gymnax", "mujoco",
            "dm-reverb", "tensorflow-cpu")
LOG_TAIL_LINES = 40
EVAL_SEED = 100  # the evaluation episodes' seed: never a training seed of any suite


@dataclasses.dataclass(frozen=True)
class CellGroup:
    """The seeds of one (agent, task) that one process trains: one seed (single process), or several in one
    vmapped call (anakin)."""

    suite: Suite
    agent: str
    task: Task
    seeds: Tuple[int, ...]

    @property
    def launch(self) -> str:
        """"single" or "anakin": the row's (`Suite.launch_of`)."""
        return self.suite.launch_of(self.agent)

    @property
    def env(self) -> str:
        """What `--env` takes: the task's `anakin_env` for a fully jitted row, where it has one."""
        return (self.launch == "anakin" and self.task.anakin_env) or self.task.env

    @property
    def run_name(self) -> str:
        if self.launch == "anakin":
            return "seeds_" + "_".join(map(str, self.seeds))
        (seed,) = self.seeds
        return f"seed_{seed}"

    def run_dir(self, runs: str) -> str:
        return os.path.join(runs, self.suite.name, self.agent, self.task.name, self.run_name)

    def seed_dir(self, runs: str, seed: int) -> str:
        """Where the seed's actor.csv and summary.json are (Anakin puts several seeds in seed_<n>/)."""
        directory = self.run_dir(runs)
        return directory if len(self.seeds) == 1 else os.path.join(directory, f"seed_{seed}")

    def command(self, run_dir: str) -> List[str]:
        """The `python -m launch` arguments that train this group (after `python -m launch`)."""
        task, suite = self.task, self.suite
        argv = ["--agent", suite.agent_of(self.agent), "--env", self.env, "--steps", str(task.decisions)]
        if task.action_repeat > 1:
            argv += ["--action-repeat", str(task.action_repeat)]
        if self.launch == "anakin":
            argv += ["--launch", "anakin", "--seeds", ",".join(map(str, self.seeds))]
        else:
            (seed,) = self.seeds
            argv += ["--seed", str(seed), "--replay", "local"]
        preset = suite.preset_of(task.name)
        if preset:
            argv += ["--preset", preset]
        for assignment in (*suite.config.get(self.agent, ()), *task.config):
            argv += ["--config", assignment]
        return argv + ["--return-window", str(task.return_window), "--progress-seconds", "60",
                       "--run-dir", run_dir, "--overwrite"]


def finished_run(run_dir: str, group: CellGroup) -> bool:
    """Whether `run_dir` holds a finished run (neither interrupted nor failed) of exactly the group's seeds (its
    summary.json)."""
    try:
        with open(os.path.join(run_dir, "summary.json")) as f:
            summary = json.load(f)
    except (OSError, json.JSONDecodeError):
        return False
    seeds = [seed_summary["seed"] for seed_summary in summary.get("seeds", [summary])]
    # A run an error ended says "failed": true (and, if distributed, "interrupted": false too): not finished.
    finished = summary.get("interrupted") is False and not summary.get("failed")
    return finished and sorted(seeds) == sorted(group.seeds)


def resumable_stop(group: CellGroup, exit_code: int, run_dir: str) -> bool:
    """Whether an Anakin group's process was stopped by Ctrl-C or SIGTERM after saving a checkpoint (its exit
    code is 128 + the signal's number)."""
    return (group.launch == "anakin" and exit_code in (128 + signal.SIGINT, 128 + signal.SIGTERM)
            and has_anakin_checkpoint(run_dir))


def has_anakin_checkpoint(run_dir: str) -> bool:
    """Whether `run_dir` holds an Anakin run (its `run_options.json` says launch anakin; an older run's has
    `anakin.json`) with a complete checkpoint (a directory under `checkpoints/` not ending in `.tmp`). Read from the
    file system, so the runner imports no JAX: `launch.engines.anakin.is_anakin_run` says the same."""
    try:
        with open(os.path.join(run_dir, "run_options.json")) as f:
            anakin = json.load(f).get("launch") == "anakin"
    except (OSError, ValueError, AttributeError):
        anakin = os.path.exists(os.path.join(run_dir, "anakin.json"))
    checkpoints = os.path.join(run_dir, "checkpoints")
    return anakin and os.path.isdir(checkpoints) and any(not name.endswith(".tmp") for name in os.listdir(checkpoints))


def cell_path(out: str, suite: str, agent: str, task: str, seed: int, error: bool = False) -> str:
    """`<out>/<suite>/cells/<agent>/<task>/seed_<n>.json` (`.error.json` for a failed cell)."""
    suffix = ".error.json" if error else ".json"
    return os.path.join(out, suite, "cells", agent, task, f"seed_{seed}{suffix}")


def groups(suite: Suite, agents: Sequence[str], tasks: Sequence[str], seeds: Sequence[int],
           out: str) -> Tuple[List[CellGroup], List[Tuple[str, str, int]]]:
    """(the groups to train, the (agent, task, seed) cells already finished). A cell is finished when its JSON
    exists; an Anakin group holds every unfinished seed of its (agent, task)."""
    todo, done = [], []
    for agent in agents:
        for task_name in suite.cells[agent]:
            if task_name not in tasks:
                continue
            missing = []
            for seed in seeds:
                if os.path.exists(cell_path(out, suite.name, agent, task_name, seed)):
                    done.append((agent, task_name, seed))
                else:
                    missing.append(seed)
            task = suite.task(task_name)
            if suite.launch_of(agent) == "anakin" and missing:
                todo.append(CellGroup(suite, agent, task, tuple(missing)))
            else:
                todo.extend(CellGroup(suite, agent, task, (seed,)) for seed in missing)
    return todo, done


def run_group(group: CellGroup, out: str, runs: str, jobs: int = 1,
              record_finished: bool = False) -> Dict[int, Dict[str, Any]]:
    """Trains `group` in a fresh `python -m launch` process and writes each seed's record (or, if the process
    failed or left no episodes, its `.error.json`). Returns seed -> record (with "error" for a failed one); nothing
    for an Anakin group stopped by a signal with its checkpoint saved (`resumable_stop`).

    With `record_finished`, a group whose run directory already holds a finished run of its seeds (`finished_run`:
    trained elsewhere and copied in, or by an invocation that stopped before it recorded) is recorded from it,
    untrained: its record says so, and gives the training process's device (its summary's) instead of this
    process's packages and machine."""
    run_dir = group.run_dir(runs)
    os.makedirs(os.path.dirname(run_dir), exist_ok=True)
    argv = group.command(shown(run_dir))  # the child runs in the repository: the command reads as a user's
    log_path = run_dir + ".log"
    started = datetime.datetime.now(datetime.timezone.utc)
    recorded = record_finished and finished_run(run_dir, group)
    # An Anakin group stopped part way (a signal, a session's end) left a checkpoint: it continues from there.
    resumed = not recorded and group.launch == "anakin" and has_anakin_checkpoint(run_dir)
    run_argv = ["--resume", shown(run_dir), "--progress-seconds", "60"] if resumed else argv
    if recorded:
        with open(os.path.join(run_dir, "summary.json")) as f:
            summary = json.load(f)
        exit_code, wall_seconds, cpu_seconds = 0, summary["wall_seconds"], None
        where = {"recorded_from_finished_run": True, "commit": provenance()["commit"], "packages": None,
                 "machine": None, "device": (summary.get("seeds") or [summary])[0].get("device")}
    else:
        where = provenance()  # the tree the training process starts from (it may change while a long cell runs)
        start = time.time()
        with open(log_path, "a" if resumed else "w") as log:
            process = subprocess.Popen([sys.executable, "-m", "launch", *run_argv], cwd=REPO, stdout=log,
                                       stderr=subprocess.STDOUT, env=_environment())
            _, status, usage = os.wait4(process.pid, 0)
        exit_code = os.waitstatus_to_exitcode(status)
        if resumable_stop(group, exit_code, run_dir):
            return {}  # no record: the group is unfinished, and the next invocation resumes it
        wall_seconds, cpu_seconds = round(time.time() - start, 2), round(usage.ru_utime + usage.ru_stime, 2)
    common = {
        "suite": group.suite.name,
        "agent": group.agent,
        "task": group.task.name,
        "env": group.env,
        "preset": group.suite.preset_of(group.task.name),
        "launch": group.launch,
        "budget_steps": group.task.steps,
        **({"action_repeat": group.task.action_repeat} if group.task.action_repeat > 1 else {}),
        "return_window": group.task.return_window,
        "command": ["python", "-m", "launch", *argv],
        **({"resumed_with": ["python", "-m", "launch", *run_argv]} if resumed else {}),
        "seeds_in_process": list(group.seeds),
        "parallel_jobs": jobs,
        "exit_code": exit_code,
        "wall_seconds": wall_seconds,
        "cpu_seconds": cpu_seconds,
        "started_at": started.isoformat(timespec="seconds"),
        "run_dir": shown(run_dir),
        **where,
    }
    records = {}
    for seed in group.seeds:
        path = cell_path(out, group.suite.name, group.agent, group.task.name, seed)
        error_path = cell_path(out, group.suite.name, group.agent, group.task.name, seed, error=True)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        try:
            if exit_code != 0:
                raise RuntimeError(f"python -m launch exited with code {exit_code}")
            record = {**common, "seed": seed, **seed_results(group.seed_dir(runs, seed), group, seed)}
        except (RuntimeError, OSError, ValueError) as error:
            record = {**common, "seed": seed, "error": f"{type(error).__name__}: {error}",
                      "log": shown(log_path),
                      "log_tail": _tail(log_path)}
            _write_json(error_path, record)
        else:
            if group.suite.evaluates_final_policy and group.launch != "anakin":
                record.update(evaluation_fields(group.seed_dir(runs, seed), group.suite.eval_episodes))
            _write_json(path, record)
            if os.path.exists(error_path):
                os.remove(error_path)
        records[seed] = record
    return records


def greedy_evaluation(run_dir: str, episodes: int) -> Dict[str, Any]:
    """The final policy of a finished run, `episodes` episodes without exploration, in a fresh process:
    `python -m launch.cli.evaluate RUN --episodes N --seed 100`. Returns {"episodes", "seed", "step", "returns",
    "mean_return", "command"}; RuntimeError with the command's last output if it fails."""
    argv = ["-m", "launch.cli.evaluate", shown(run_dir), "--episodes", str(episodes), "--seed", str(EVAL_SEED)]
    done = subprocess.run([sys.executable, *argv], cwd=REPO, capture_output=True, text=True, env=_environment())
    lines = done.stdout.strip().splitlines()
    if done.returncode != 0 or not lines:
        output = (done.stderr or done.stdout).strip().splitlines()
        raise RuntimeError(f"python {' '.join(argv)} exited with code {done.returncode}: "
                           f"{output[-1] if output else 'no output'}")
    result = json.loads(lines[-1])
    return {"episodes": episodes, "seed": EVAL_SEED, "step": result["step"],
            "returns": [round(value, 3) for value in result["returns"]],
            "mean_return": round(result["mean_return"], 3), "command": ["python", *argv]}


def evaluation_fields(run_dir: str, episodes: int) -> Dict[str, Any]:
    """{"greedy": ...} for a record, or {"greedy_error": why} (the cell's training result stands either way)."""
    try:
        return {"greedy": greedy_evaluation(run_dir, episodes)}
    except (RuntimeError, OSError, ValueError) as error:
        return {"greedy_error": str(error)}


def add_missing_evaluations(suite: Suite, done: Sequence[Tuple[str, str, int]], out: str) -> Iterator[str]:
    """Evaluates the final policy of each finished cell in `done` whose record has no `greedy` yet (cells stored
    before the suite evaluated, or whose evaluation failed) and rewrites its record; yields a line per cell as it
    goes. Needs the cell's run directory (`runs/...`, kept on the machine that trained it)."""
    for agent, task, seed in done:
        path = cell_path(out, suite.name, agent, task, seed)
        with open(path) as f:
            record = json.load(f)
        if "greedy" in record:
            continue
        run_dir = os.path.join(REPO, record["run_dir"])  # stored relative to the repository, or absolute
        if not os.path.isdir(run_dir):
            yield (f"{agent} {task} seed {seed}: not evaluated, its run directory {shown(run_dir)} is gone "
                   "(remove the record to train the cell again)")
            continue
        record.pop("greedy_error", None)
        record.update(evaluation_fields(run_dir, suite.eval_episodes))
        _write_json(path, record)
        outcome = (f"greedy {record['greedy']['mean_return']:.1f} over {suite.eval_episodes} episodes"
                   if "greedy" in record else f"evaluation FAILED ({record['greedy_error']})")
        yield f"{agent} {task} seed {seed}: {outcome}"


def seed_results(directory: str, group: CellGroup, seed: int) -> Dict[str, Any]:
    """The curve, returns and summary of one seed's run directory, on environment steps (a task that repeats
    actions logs decisions, each `action_repeat` steps). ValueError if it finished no episode."""
    steps, returns = read_episodes(os.path.join(directory, "actor.csv"))
    repeat = group.task.action_repeat  # the suite's repeating tasks end no episode inside a run of repeats
    steps = steps * repeat
    if not len(steps):
        raise ValueError(f"{directory}/actor.csv holds no finished episode")
    window = group.task.return_window
    averages = moving_average(returns, window)
    full = averages[window - 1:] if len(averages) >= window else averages[-1:]  # fewer episodes: the final one
    grid = np.linspace(group.task.steps / CURVE_POINTS, group.task.steps, CURVE_POINTS).round().astype(int)
    reference_steps = sorted({ref.steps for ref in group.suite.references_for(group.agent, group.task.name)
                              if ref.steps is not None and ref.steps <= group.task.steps})
    with open(os.path.join(directory, "summary.json")) as f:
        summary = json.load(f)
    return {
        "env_steps": int(summary["env_steps"]) * repeat if "env_steps" in summary else int(steps[-1]),
        "episodes": len(returns),
        "final_average_return": round(float(averages[-1]), 3),
        "best_average_return": round(float(np.max(full)), 3),
        "average_return_at_steps": {str(s): average_at(steps, averages, s) for s in reference_steps},
        "curve": {"steps": grid.tolist(), "average_return": [average_at(steps, averages, s) for s in grid]},
        "summary": summary,
    }


def read_episodes(path: str) -> Tuple[np.ndarray, np.ndarray]:
    """(actor steps at each episode's end, its return) from a run's actor.csv."""
    steps, returns = [], []
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            if row.get("episode_return") not in (None, "") and row.get("actor_steps") not in (None, ""):
                steps.append(int(float(row["actor_steps"])))
                returns.append(float(row["episode_return"]))
    return np.asarray(steps, np.int64), np.asarray(returns, np.float64)


def moving_average(values: np.ndarray, window: int) -> np.ndarray:
    """The mean of the last `window` values (fewer at the start) after each value."""
    sums = np.cumsum(np.concatenate([[0.0], values]))
    counts = np.minimum(np.arange(1, len(values) + 1), window)
    return (sums[1:] - sums[np.arange(1, len(values) + 1) - counts]) / counts


def average_at(steps: np.ndarray, averages: np.ndarray, at: int) -> Optional[float]:
    """The moving average after the last episode that ended by step `at`; None before the first."""
    index = int(np.searchsorted(steps, at, side="right")) - 1
    return None if index < 0 else round(float(averages[index]), 3)


def provenance() -> Dict[str, Any]:
    """The commit (and whether tracked files differed from it, the results pages and PNGs that runners write under
    docs/results/ aside), package versions and the machine."""
    def git(*args):
        try:
            return subprocess.run(["git", *args], cwd=REPO, capture_output=True, text=True, check=True).stdout.strip()
        except (OSError, subprocess.CalledProcessError):
            return None

    versions = {}
    for name in PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            pass
    # A runner rewrites its suite's page as it goes, so a second runner started in the same clone would otherwise
    # call its cells modified though no code was.
    status = git("status", "--porcelain", "--untracked-files=no", "--", ".", ":(exclude)docs/results")
    return {
        # A tree copied without .git (a cluster node, an accelerator machine) names its commit in RESULTS_COMMIT.
        "commit": git("rev-parse", "HEAD") or os.environ.get("RESULTS_COMMIT"),
        "dirty": bool(status) if status is not None else None,
        "packages": versions,
        "machine": machine_info(),
    }


def shown(path: str) -> str:
    """`path` relative to the repository if it lies inside it, else absolute."""
    path = os.path.abspath(path)
    return os.path.relpath(path, REPO) if path.startswith(REPO + os.sep) else path


def _environment() -> Dict[str, str]:
    return {**os.environ, "PYTHONPATH": REPO + os.pathsep + os.environ.get("PYTHONPATH", "")}


def _tail(path: str) -> List[str]:
    try:
        with open(path, errors="replace") as f:
            return [line.rstrip("\n") for line in f.readlines()[-LOG_TAIL_LINES:]]
    except OSError:
        return []


def _write_json(path: str, data: Dict[str, Any]) -> None:
    files.write_json(path, data, indent=1)  # whole: a killed runner never leaves half a record that counts as finished
