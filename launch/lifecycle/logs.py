"""A run's logs across a resume: CSV files cut back to the checkpoint, TensorBoard told where to purge from."""

import csv
import os
from typing import Any, Mapping, Optional

from acmelike.checkpointing import read_json_state
from acmelike.loggers import CSVLogger, Dispatcher, NoOpLogger, TensorBoardLogger
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
        with open(path + ".tmp", "w", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=fieldnames)
            writer.writeheader()
            writer.writerows(rows[:keep])
        os.replace(path + ".tmp", path)


def node_logger(run_dir: Optional[str], label: str, step_key: Optional[str] = None):
    """A distributed node's logger: `<run_dir>/<label>.csv`, plus TensorBoard if the run's options ask for it.

    The CSV file is continued: a node its engine restarted carries on its own rows, and a resumed program the rows
    its launcher cut back to the checkpoint (a new launch starts without any: `supervisor.prepare_run_directory`).
    A node built when the run already has a checkpoint hides from TensorBoard what was logged after it.
    """
    if not run_dir:
        return NoOpLogger()
    latest = latest_run_checkpoint(run_dir)
    loggers = [CSVLogger(run_dir, label, append=True)]
    if read_run_options(run_dir).tensorboard:
        purge = purge_step(latest, step_key) if latest is not None else None
        loggers.append(TensorBoardLogger(os.path.join(run_dir, "tensorboard"), label, step_key=step_key,
                                         purge_step=purge))
    return Dispatcher(loggers)


def purge_step(checkpoint: str, step_key: Optional[str]) -> Optional[int]:
    """The first TensorBoard step past `checkpoint` on the `step_key` axis (a count the checkpoint holds)."""
    return first_step_after(read_counts(checkpoint), step_key)


def first_step_after(counts: dict, step_key: Optional[str]) -> Optional[int]:
    """The first TensorBoard step past a checkpoint's `counts` on the `step_key` axis (None if they lack it):
    a resumed logger's `purge_step`."""
    return int(counts[step_key]) + 1 if step_key in counts else None


def read_counts(checkpoint: str) -> dict:
    """The counts (actor_steps, learner_steps, ...) saved in `checkpoint`."""
    return read_json_state(checkpoint, "counter")
