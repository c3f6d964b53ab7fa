"""A run's logs: the one place that assembles a logger (`run_logger`, for every engine), and what happens to logs
across a resume: CSV files cut back to the checkpoint, TensorBoard told where to purge from."""

import csv
import os
from typing import Any, Mapping, Optional

from acmelike import files
from acmelike.checkpointing import read_json_state
from acmelike.loggers import CSVLogger, Dispatcher, NoOpLogger, TensorBoardLogger, TerminalLogger
from launch.lifecycle.run_directory import latest_run_checkpoint, read_run_options


def log_sizes(run_dir: str) -> dict:
    """{csv file: rows} of the run's CSV logs, so a resumed run drops the rows written after the save. Rows, not
    bytes: a log that gains a column after the save is rewritten with a wider header (`CSVLogger`)."""
    sizes = {}
    for name in sorted(os.listdir(run_dir)):
        if name.endswith(".csv"):
            with open(os.path.join(run_dir, name), newline="") as f:
                sizes[name] = sum(1 for _ in csv.DictReader(f))
    return sizes


def truncate_logs(run_dir: str, sizes: Mapping[str, int], counts: Mapping[str, Any]) -> None:
    """Cuts each CSV log back to the checkpoint: to its rows then (rows past them belong to a timeline that was
    lost), and before the first row counting past the checkpoint's `counts` (a distributed program's actor logs
    its own steps before its counter forwards them, so a row written before the checkpoint may count steps the
    checkpoint does not hold)."""
    for name, size in sizes.items():
        path = os.path.join(run_dir, name)
        if not os.path.exists(path):
            continue
        with open(path, newline="") as f:
            reader = csv.DictReader(f)
            rows, fieldnames = list(reader)[:size], reader.fieldnames
        if not fieldnames:
            continue
        counted = [key for key in fieldnames or () if key in counts]
        keep = next((index for index, row in enumerate(rows)
                     if any(row[key] and float(row[key]) > counts[key] for key in counted)), len(rows))
        with files.open_whole(path, newline="") as f:
            writer = csv.DictWriter(f, fieldnames=fieldnames)
            writer.writeheader()
            writer.writerows(rows[:keep])


def run_logger(run_dir: Optional[str], label: str, step_key: Optional[str] = None, *, append: bool = False,
               tensorboard: bool = False, resumed_at: Optional[Mapping[str, Any]] = None,
               terminal_period_s: Optional[float] = None):
    """The logger of one part of a run (`label`: learner, actor, actor_<i>, evaluator), in every engine:

    - `<run_dir>/<label>.csv` (none without `run_dir`), continued if `append`;
    - a line on the terminal at most every `terminal_period_s` seconds (None: none);
    - with `tensorboard` (and `run_dir`), events under `<run_dir>/tensorboard/` with `step_key` as the x-axis. A run
      resumed from a checkpoint whose counts are `resumed_at` hides from TensorBoard what was logged past it
      (`first_step_after`), so a curve never doubles back.

    A NoOpLogger when it writes nowhere.
    """
    loggers = []
    if run_dir:
        loggers.append(CSVLogger(run_dir, label, append=append))
    if terminal_period_s is not None:
        loggers.append(TerminalLogger(label, time_delta=terminal_period_s))
    if tensorboard and run_dir:
        purge = first_step_after(resumed_at, step_key) if resumed_at is not None else None
        loggers.append(TensorBoardLogger(os.path.join(run_dir, "tensorboard"), label, step_key=step_key,
                                         purge_step=purge))
    return Dispatcher(loggers) if loggers else NoOpLogger()


def node_logger(run_dir: Optional[str], label: str, step_key: Optional[str] = None):
    """A distributed node's `run_logger`, as the run directory says: TensorBoard if the run's options ask for it.

    The CSV file is continued: a node its engine restarted carries on its own rows, and a resumed program the rows
    its launcher cut back to the checkpoint (a new launch starts without any: `supervisor.prepare_run_directory`).
    A node built when the run already has a checkpoint hides from TensorBoard what was logged after it.
    """
    if not run_dir:
        return NoOpLogger()
    tensorboard = read_run_options(run_dir).tensorboard
    latest = latest_run_checkpoint(run_dir) if tensorboard else None
    return run_logger(run_dir, label, step_key, append=True, tensorboard=tensorboard,
                      resumed_at=read_counts(latest) if latest is not None else None)


def first_step_after(counts: dict, step_key: Optional[str]) -> Optional[int]:
    """The first TensorBoard step past a checkpoint's `counts` on the `step_key` axis (None if they lack it):
    a resumed logger's `purge_step`."""
    return int(counts[step_key]) + 1 if step_key in counts else None


def read_counts(checkpoint: str) -> dict:
    """The counts (actor_steps, learner_steps, ...) saved in `checkpoint`."""
    return read_json_state(checkpoint, "counter")
