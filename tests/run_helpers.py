"""Running `python -m launch ...` in a subprocess for lifecycle tests (checkpoints, resume, snapshots)."""

import csv
import json
import os
import subprocess
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# A DQN that learns something on CartPole within a few thousand steps, cheaply.
SMALL_DQN = ["--config", "hidden_sizes=32,32", "--config", "min_replay_size=200", "--config", "batch_size=32",
             "--config", "epsilon_decay_steps=2000"]


def launch_command(*args: str) -> list:
    return [sys.executable, "-m", "launch", *args]


def environment() -> dict:
    return {**os.environ, "PYTHONPATH": REPO + os.pathsep + os.environ.get("PYTHONPATH", "")}


def run(*args: str, module: str = "launch", timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", module, *args], cwd=REPO, env=environment(), capture_output=True,
                          text=True, timeout=timeout)


def summary_line(stdout: str) -> dict:
    return json.loads([line for line in stdout.splitlines() if line.startswith("{")][-1])


def csv_column(path: str, column: str) -> list:
    with open(path, newline="") as f:
        return [float(row[column]) for row in csv.DictReader(f) if row.get(column)]
