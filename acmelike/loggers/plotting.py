"""plot_learning_curve: a PNG of one CSV column against another, raw and smoothed."""

import csv
from typing import Optional, Sequence

import numpy as np


def _read_columns(csv_path: str, x: Optional[str], y: str) -> tuple[np.ndarray, np.ndarray]:
    with open(csv_path, newline="") as f:
        reader = csv.DictReader(f)
        columns = reader.fieldnames
        if columns is None:  # created, nothing written yet (a run stopped before its first episode ended)
            return np.zeros(0), np.zeros(0)
        for name in (x, y):
            if name is not None and name not in columns:
                raise ValueError(f"Column {name!r} is not in {csv_path}; its columns are {columns}.")
        xs, ys = [], []
        for index, row in enumerate(reader):
            x_cell = str(index) if x is None else row.get(x, "")
            y_cell = row.get(y, "")
            if x_cell and y_cell:  # rows written before a column existed have empty cells
                xs.append(float(x_cell))
                ys.append(float(y_cell))
    return np.asarray(xs), np.asarray(ys)


def _columns(csv_path: str) -> Sequence[str]:
    with open(csv_path, newline="") as f:
        return csv.DictReader(f).fieldnames or ()


def _actor_series(paths: Sequence[str], y: str, every_log: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """Column `y` against actor steps over the actors' CSVs, in step order: every log that has begun (a
    ValueError names one without the columns), or with `every_log=False` only those that have `y`."""
    series = [_read_columns(path, "actor_steps", y) for path in paths if every_log or y in _columns(path)]
    if not series:
        return np.zeros(0), np.zeros(0)
    xs, ys = np.concatenate([xs for xs, _ in series]), np.concatenate([ys for _, ys in series])
    order = np.argsort(xs, kind="stable")
    return xs[order], ys[order]


def moving_average(values: np.ndarray, window: int) -> np.ndarray:
    """Trailing mean over up to `window` values (fewer at the start), same length as `values`."""
    cumulative = np.cumsum(np.insert(np.asarray(values, dtype=np.float64), 0, 0.0))
    ends = np.arange(1, len(values) + 1)
    starts = np.maximum(ends - window, 0)
    return (cumulative[ends] - cumulative[starts]) / (ends - starts)


def plot_learning_curve(
    csv_path: str,
    png_path: str,
    x: Optional[str] = "actor_steps",
    y: str = "episode_return",
    window: int = 20,
    title: Optional[str] = None,
) -> str:
    """Plots column `y` against column `x` (None: row index) of a CSV log, raw and as a `window` moving average.

    Uses matplotlib's Agg canvas directly (imported here, so importing acmelike.loggers does not import
    matplotlib, and pyplot's global backend is untouched). Returns `png_path`.
    """
    if window < 1:
        raise ValueError(f"window must be >= 1, got {window}.")
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    xs, ys = _read_columns(csv_path, x, y)
    figure = Figure(figsize=(6, 4), dpi=100)
    FigureCanvasAgg(figure)
    axes = figure.add_subplot()
    axes.plot(xs, ys, alpha=0.3, label=y)
    if len(ys):
        axes.plot(xs, moving_average(ys, window), label=f"{y} ({window}-point mean)")
    axes.set_xlabel(x or "row")
    axes.set_ylabel(y)
    axes.set_title(title if title is not None else csv_path)
    axes.legend(loc="best")
    axes.grid(alpha=0.3)
    figure.tight_layout()
    figure.savefig(png_path)
    return png_path


def plot_run_learning_curve(
    run_dir: str,
    *,
    actor_labels: Sequence[str],
    window: int = 20,
    title: Optional[str] = None,
    png_name: str = "learning_curve.png",
) -> Optional[str]:
    """The learning curve of a run directory: training episode returns (from `<label>.csv` for each actor label,
    raw and as a `window`-episode moving average) and, where `evaluator.csv` exists, the evaluation rounds'
    average returns, against actor steps, with labelled axes. Returns the PNG's path (None if no episode ended)."""
    import os

    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    paths = [os.path.join(run_dir, f"{label}.csv") for label in actor_labels]
    paths = [path for path in paths if os.path.exists(path)]
    steps, returns = _actor_series(paths, "episode_return")
    # A multi-agent run's CSVs also carry each agent's return (`episode_return/<agent id>`): their means go beside
    # the team's.
    agent_columns = sorted({column for path in paths for column in _columns(path)
                            if column.startswith("episode_return/")})
    evaluator_path = os.path.join(run_dir, "evaluator.csv")
    evaluation = _read_columns(evaluator_path, "actor_steps", "average_return") if os.path.exists(evaluator_path) else None
    if not len(steps) and (evaluation is None or not len(evaluation[0])):
        return None
    figure = Figure(figsize=(7, 4.5), dpi=100)
    FigureCanvasAgg(figure)
    axes = figure.add_subplot()
    if len(steps):
        axes.plot(steps, returns, alpha=0.25, color="tab:blue", label="training episode return")
        axes.plot(steps, moving_average(returns, window), color="tab:blue", label=f"training, {window}-episode mean")
    for column in agent_columns:
        xs, ys = _actor_series(paths, column, every_log=False)
        if len(ys):
            axes.plot(xs, moving_average(ys, window), linewidth=0.8, linestyle="--",
                      label=f"{column.split('/', 1)[1]}, {window}-episode mean")
    if evaluation is not None and len(evaluation[0]):
        axes.plot(*evaluation, marker="o", color="tab:orange", label="evaluation (average return)")
    axes.set_xlabel("actor steps")
    axes.set_ylabel("episode return")
    axes.set_title(title if title is not None else run_dir)
    axes.legend(loc="best")
    axes.grid(alpha=0.3)
    figure.tight_layout()
    path = os.path.join(run_dir, png_name)
    figure.savefig(path)
    return path
