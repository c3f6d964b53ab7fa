"""Running the command line for tests: in this process (`command_line`), or as a subprocess (`launch_command`,
`environment`) where the test is about the process (a kill -9, a fresh interpreter, its environment variables)."""

import contextlib
import csv
import io
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


def command_line(*args, module: str = "launch") -> subprocess.CompletedProcess:
    """`python -m <module> *args` (launch, launch.cli.evaluate or launch.cli.record) run in this process: its exit
    code (argparse's SystemExit included), standard output and standard error, as `subprocess.run` would return
    them, without paying a new interpreter's JAX/TensorFlow imports."""
    import importlib

    main = importlib.import_module("launch.cli.train" if module == "launch" else module).main
    stdout, stderr = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
        try:
            code = main([str(arg) for arg in args])
        except SystemExit as exit_:
            code = exit_.code if isinstance(exit_.code, int) else (0 if exit_.code is None else 1)
    return subprocess.CompletedProcess([module, *map(str, args)], code, stdout.getvalue(), stderr.getvalue())


def summary_line(stdout: str) -> dict:
    return json.loads([line for line in stdout.splitlines() if line.startswith("{")][-1])


def csv_column(path: str, column: str) -> list:
    with open(path, newline="") as f:
        return [float(row[column]) for row in csv.DictReader(f) if row.get(column)]


def newest_checkpoint(run_dir: str):
    """The checkpoint a resume of `run_dir` starts from: its newest complete one (None if there is none)."""
    from acmelike.checkpointing import latest_checkpoint

    return latest_checkpoint(os.path.join(run_dir, "checkpoints"))


def learned_checkpoint(run_dir: str):
    """`newest_checkpoint(run_dir)` if its counts hold learner steps, else None: on a slow machine the first
    checkpoints land before the replay holds enough to learn from, and a test of what a resume restores needs one
    that the learner wrote into."""
    path = newest_checkpoint(run_dir)
    if path is None:
        return None
    try:
        with open(os.path.join(path, "counter.json")) as f:
            return path if json.load(f).get("learner_sgd_steps", 0) > 0 else None
    except (OSError, ValueError):  # pruned between the listing and the read
        return None
