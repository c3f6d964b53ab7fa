"""Keeps a long run's learning curve in the repository, where a run directory (runs/..., checkpoints and all) is
too large to commit:

    .venv/bin/python -m benchmarks.keep_curve RUN_DIR benchmarks/curves/NAME [--every 25000] [--window 100]
        [--evaluate EPISODES]

Writes `training.csv` (`actor_steps`, `mean_return_last_100_episodes`, `episodes`: the mean return of the last
`window` episodes that ended by each multiple of `every` environment steps, from the run's `actor.csv`) and copies
the run's `config.json`, `summary.json`, `learning_curve.png` and `evaluator.csv` where it has them. With
`--evaluate N`, also `evaluation.json`: the final policy's N episodes without exploration, the results runner's
greedy evaluation (`python -m launch.cli.evaluate RUN --episodes N --seed 100`). The results runner draws such a
curve beside a suite's cells (`StoredCurve` in `benchmarks/results_runner/suites.py`).
"""

import argparse
import csv
import os
import shutil
import sys
from typing import List, Optional, Sequence, Tuple

import numpy as np

from acmelike import files
from benchmarks.results_runner.cells import greedy_evaluation, read_episodes

COPIED = ("config.json", "summary.json", "learning_curve.png", "evaluator.csv")


def curve_points(steps: np.ndarray, returns: np.ndarray, every: int, window: int) -> List[Tuple[int, float, int]]:
    """(step, mean of the last `window` returns of episodes ended by it, episodes ended by it) at each multiple of
    `every` up to the last episode's end; steps before the first episode's end are left out."""
    points = []
    for at in range(every, int(steps[-1]) + 1, every) if len(steps) else ():
        ended = int(np.searchsorted(steps, at, side="right"))
        if ended:
            points.append((at, round(float(np.mean(returns[max(0, ended - window):ended])), 3), ended))
    return points


def keep_curve(run_dir: str, out: str, every: int = 25_000, window: int = 100) -> List[str]:
    """Writes `out/training.csv` and copies the run's files beside it; returns the paths written."""
    actor_csv = os.path.join(run_dir, "actor.csv")
    if not os.path.exists(actor_csv):
        raise FileNotFoundError(f"{run_dir} has no actor.csv: pass the run directory a training run wrote.")
    steps, returns = read_episodes(actor_csv)
    os.makedirs(out, exist_ok=True)
    written = [os.path.join(out, "training.csv")]
    with files.open_whole(written[0], newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["actor_steps", f"mean_return_last_{window}_episodes", "episodes"])
        writer.writerows(curve_points(steps, returns, every, window))
    for name in COPIED:
        if os.path.exists(os.path.join(run_dir, name)):
            written.append(shutil.copy(os.path.join(run_dir, name), os.path.join(out, name)))
    return written


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("run_dir")
    parser.add_argument("out")
    parser.add_argument("--every", type=int, default=25_000, help="environment steps between points")
    parser.add_argument("--window", type=int, default=100, help="episodes each point averages")
    parser.add_argument("--evaluate", type=int, default=0, metavar="EPISODES",
                        help="also evaluate the final policy greedily for this many episodes (evaluation.json)")
    args = parser.parse_args(argv)
    for path in keep_curve(args.run_dir, args.out, args.every, args.window):
        print(path)
    if args.evaluate:
        evaluation = greedy_evaluation(args.run_dir, args.evaluate)
        path = os.path.join(args.out, "evaluation.json")
        files.write_json(path, evaluation)
        print(f"{path}: mean return {evaluation['mean_return']} over {args.evaluate} episodes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
