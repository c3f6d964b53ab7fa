"""What every engine of a distributed program shares around its launch: the run directory, progress, failures.

    prepare_run_directory(config, options, launch, num_actors)   # before any node starts
    ... the engine launches the graph, and every period_s: print_progress(run_dir, config) ...
    summary = conclude(config, num_actors, launch, wall, stop, engine=..., logs_hint=...)
                                        # the summary, or DistributedRunError naming a failed node

Nodes write what the launcher reads here: the steps limiter `progress.json`, a failing node
`failures/<node>.txt`, the node ending the program `ended.json`, actors and the evaluator their CSV logs.
Launchpad (`launchpad_engine`) and Ray (`ray_engine`) both call these; neither reaches into the other.
"""

import csv
import dataclasses
import glob
import json
import os
import time
from typing import Any, Callable, Dict, List, Mapping, Optional

from acmelike.loggers.plotting import plot_run_learning_curve
from launch.engines.distributed import nodes
from launch.experiments.config import ExperimentConfig
from launch.experiments.interrupts import StopRequests
from launch.experiments.summaries import (agent_returns, make_tracker, repeat_note, run_summary, summary_identity,
                                         write_summary)
from launch.lifecycle.checkpoints import RunLifecycle
from launch.lifecycle.run_directory import FAILURES_DIR, RunOptions, record_failure, write_config, write_failure_file


class DistributedRunError(RuntimeError):
    """A node of a distributed program failed; the message names it and carries its traceback, and `summary` is
    the run's summary as written to `<run_dir>/summary.json` (its `failures` list the failed nodes)."""

    def __init__(self, message: str, summary: Optional[Dict[str, Any]] = None):
        super().__init__(message)
        self.summary = summary


def prepare_run_directory(
    config: ExperimentConfig, options: RunOptions, launch: str, num_actors: int
) -> ExperimentConfig:
    """Checks the run directory (another run's checkpoints are refused), writes `run_options.json` (which nodes
    read) and `config.json`, cuts the logs back when resuming (else removes an earlier launch's), and clears what
    an earlier launch left for the launcher to read. Returns `config` with an absolute `run_dir`, the one every
    node is given."""
    if not config.run_dir:
        raise ValueError("A distributed run needs config.run_dir: nodes report progress, logs and failures there.")
    if config.stop_at_average_return is not None and not config.evaluation_every:
        raise ValueError(
            "A distributed run stops at a target return when an evaluation round reaches it: "
            "set evaluation_every (--eval-every) > 0 together with stop_at_average_return (--stop-at-return)."
        )
    run_dir = os.path.abspath(config.run_dir)
    config = dataclasses.replace(config, run_dir=run_dir)
    lifecycle = RunLifecycle(config, dataclasses.replace(options, launch=launch, actors=num_actors))
    os.makedirs(run_dir, exist_ok=True)
    write_config(config)
    stale_files = [os.path.join(run_dir, name) for name in ("progress.json", nodes.ENDED_FILE)]
    if not lifecycle.resuming:  # the nodes continue their CSV logs (a restarted node its own): a new run has none
        stale_files += glob.glob(os.path.join(run_dir, "*.csv"))
    for stale in glob.glob(os.path.join(run_dir, FAILURES_DIR, "*.txt")) + stale_files:
        if os.path.exists(stale):
            os.remove(stale)
    return config


def conclude(
    config: ExperimentConfig, num_actors: int, launch: str, wall: float, stop: StopRequests, *,
    engine: str, logs_hint: str, engine_failures: Mapping[str, str] = (),
    engine_failure: Optional[BaseException] = None, **extra: Any,
) -> Dict[str, Any]:
    """The end of every distributed run: writes the summary (with every node failure, a failed final save
    included, in its `failures`) and returns it, or raises `DistributedRunError` naming each failed node with its
    traceback, the summary attached, if any node failed.

    `engine_failures` are failures only the engine saw (a node whose process died without writing one);
    `engine_failure` is the engine's own error, if it raised one.
    """
    failures = read_failures(config.run_dir)
    for name, why in dict(engine_failures).items():
        if name not in failures:  # a node that died without a word: its failure file says what the engine saw
            failures[name] = why
            write_failure_file(config.run_dir, name, why)
    records = [{"name": name, "file": os.path.join(config.run_dir, FAILURES_DIR, f"{name}.txt"),
                "error": text.strip().splitlines()[-1] if text.strip() else ""} for name, text in failures.items()]
    summary = summarize(config, config.run_dir, num_actors, launch, wall, stop, failures=records, **extra)
    if failures or engine_failure is not None:
        details = "\n".join(f"--- node {name} ---\n{text}" for name, text in failures.items())
        names = ", ".join(failures) or "unknown node"
        raise DistributedRunError(
            f"distributed program failed in node(s): {names} ({engine_failure or 'see the traceback'}, on {engine}).\n"
            f"{details}\nNode logs: {logs_hint}",
            summary=summary,
        )
    return summary


def checkpoint_before_stopping(checkpoint: Callable[[], Optional[str]], run_dir: str, why: str) -> Optional[str]:
    """Checkpoints the run (the learner's training state, the replay and the counts, through the learner node's
    `checkpoint`) before the engine stops the nodes, as a one-process run does at a clean stop; returns the
    checkpoint's path (None without checkpoints).

    Every engine calls this when a signal asks the program to stop, while every node is still up: an engine's own
    stop ends the nodes at once, the replay and counter nodes with them. Before the first actor step (as reported
    in progress.json) there is nothing to keep, and nothing is saved. A save that fails is reported (stderr,
    `<run_dir>/failures/stop_checkpoint.txt`, the summary's `failures`) and the program still stops.
    """
    try:
        steps = int(read_progress(run_dir).get("actor_steps", 0))
    except (OSError, ValueError):  # the steps limiter has not started
        steps = 0
    if not steps:  # the learner node may still be building itself: nothing to keep, and no need to wait for it
        print(f"[distributed] {why} before the first actor step: nothing to checkpoint", flush=True)
        return None
    print(f"[distributed] {why}: checkpointing the learner, replay and counts before stopping the nodes",
          flush=True)
    started = time.time()
    try:
        path = checkpoint()
    except Exception as error:  # noqa: BLE001 - reported in the summary, the stop goes on
        record_failure(run_dir, "stop_checkpoint", f"the checkpoint at the stop ({why}) failed", error)
        return None
    if path:
        print(f"[distributed] checkpoint {path} written in {time.time() - started:.1f} s", flush=True)
    return path


def read_progress(run_dir: str) -> Dict[str, Any]:
    """The counts the steps limiter last wrote (it replaces the file atomically)."""
    with open(os.path.join(run_dir, "progress.json")) as f:
        return json.load(f)


def print_progress(run_dir: str, config: ExperimentConfig) -> None:
    """A progress line of `config`'s run from the counts its steps limiter last wrote (none before it writes any)."""
    try:
        counts = read_progress(run_dir)
    except (OSError, ValueError):  # not written yet
        return
    evaluation = last_evaluation(run_dir)
    print(
        f"[distributed] actor steps {int(counts.get('actor_steps', 0)):>8d}/{config.max_num_actor_steps} | "
        f"episodes {int(counts.get('actor_episodes', 0)):>5d} | learner steps {int(counts.get('learner_steps', 0)):>6d}"
        + (f" | evaluator return {evaluation:6.1f}" if evaluation is not None else "")
        + repeat_note(config.action_repeat),
        flush=True,
    )


def read_failures(run_dir: str) -> Dict[str, str]:
    failures = {}
    for path in sorted(glob.glob(os.path.join(run_dir, FAILURES_DIR, "*.txt"))):
        with open(path) as f:
            failures[os.path.splitext(os.path.basename(path))[0]] = f.read()
    return failures


def _read_csv(path: str) -> List[Dict[str, str]]:
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return list(csv.DictReader(f))


def last_evaluation(run_dir: str) -> Optional[float]:
    rows = _read_csv(os.path.join(run_dir, "evaluator.csv"))
    return float(rows[-1]["average_return"]) if rows else None


def summarize(
    config: ExperimentConfig, run_dir: str, num_actors: int, launch: str, wall: float, stop: StopRequests,
    **extra: Any,
) -> Dict[str, Any]:
    try:
        counts = read_progress(run_dir)
    except (OSError, ValueError):  # stopped before the steps limiter wrote anything
        counts = {}
    episodes = []
    for index in range(num_actors):
        episodes += _read_csv(os.path.join(run_dir, f"actor_{index}.csv"))
    episodes.sort(key=lambda row: float(row["actor_steps"]))
    tracker = make_tracker(config)
    for row in episodes:
        tracker.add(float(row["episode_return"]), int(float(row["actor_steps"])), agent_returns(row))
    evaluation = last_evaluation(run_dir)
    # A node ending the program (budget, target return) also SIGTERMs the launcher: only a signal that came
    # without such an ending is an interruption.
    ended_by_program = os.path.exists(os.path.join(run_dir, nodes.ENDED_FILE))
    interrupted = stop.signal_name == "SIGINT" or (stop.requested and not ended_by_program)
    summary = run_summary(
        summary_identity(config), tracker, counts, wall, launch=launch, actors=num_actors, inference=config.inference,
        average_evaluator_return=evaluation,
        interrupted=interrupted, **({"signal": stop.signal_name} if interrupted else {}), **extra,
    )
    write_summary(run_dir, summary)
    plot_run_learning_curve(
        run_dir,
        actor_labels=[f"actor_{index}" for index in range(num_actors)],
        window=config.return_window,
        title=f"{config.agent} on {config.environment}, {num_actors} actors ({launch})",
    )
    return summary
