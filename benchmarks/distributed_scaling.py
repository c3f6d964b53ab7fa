"""Distributed scaling: env steps/s of DQN on CartPole-v1 with 1, 2 and 4 actors under Launchpad local_mp.

Each configuration trains DQN with its learner running (`launch.run_distributed(config, num_actors=N,
launch_type="local_mp")`), and once single-process (`launch.run_single_process`) as the reference. Two rates:

* steady: the actors' own rate while running episodes, from their CSV logs (sum over actors of steps / time
  inside episodes) — process start-up, imports and JIT compilation excluded. The ratio uses this one.
* overall: env steps / wall seconds of the whole call, start-up included (what a user waits for).

Goal: 2 actors >= 1.7x one actor (local_mp, 2 cores), with DQN's default config. That config keeps 16 samples
per insert with a rate limiter whose inserts may block when distributed, so env steps/s is bounded by the
learner's rate whatever the number of actors. Informative rows repeat 1 and 2 actors with the limiter's
tolerance opened (`samples_per_insert_tolerance_rate=1e6`): the learner still runs, but no longer holds the
actors back. When `launch.make_distributed_program` cannot be imported the result says "not available" and
nothing runs. Each run is a subprocess with a time limit.

    python benchmarks/distributed_scaling.py [--quick] [--out DIR]
"""

import argparse
import csv
import json
import os
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from benchmarks.common import finish, header, print_rows, result_row, write_json  # noqa: E402

AGENT, ENV, SEED, GOAL = "dqn", "CartPole-v1", 0, 1.7
RUNS_DIR = os.path.join(ROOT, "runs", "bench-distributed")
# (actors, rate limiter opened): 0 actors is the single process. The informative rows' runs are full mode's.
FULL_RUNS = ((0, False), (1, False), (2, False), (4, False), (1, True), (2, True))
QUICK_RUNS = ((1, False), (2, False))


def availability():
    """None if the distributed launcher can be imported, else why not."""
    try:
        import launch  # noqa: F401

        from launch import make_distributed_program, run_distributed  # noqa: F401
    except ImportError as error:
        return f"not available: launch.make_distributed_program missing ({error})"
    return None


def steady_rate(run_dir: str, files) -> float:
    """Sum over actors of (steps in episodes) / (seconds in episodes), from the actors' CSV logs."""
    total = 0.0
    for name in files:
        path = os.path.join(run_dir, name)
        if not os.path.exists(path):
            continue
        steps = seconds = 0.0
        with open(path) as f:
            for row in csv.DictReader(f):
                length, rate = float(row["episode_length"]), float(row["steps_per_second"])
                if rate > 0:
                    steps, seconds = steps + length, seconds + length / rate
        total += steps / seconds if seconds else 0.0
    return total


def worker(
    num_actors: int, steps: int, run_dir: str, unthrottled: bool = False, launch_type: str = "local_mp",
    inference: str = "local",
) -> dict:
    import dataclasses

    import launch

    shutil.rmtree(run_dir, ignore_errors=True)
    config = launch.make_experiment_config(
        agent=AGENT, environment=ENV, max_num_actor_steps=steps, seed=SEED, run_dir=run_dir, progress_period_s=1e9,
        inference=inference,
    )
    if unthrottled:
        from agents.dqn import DQNBuilder

        agent_config = dataclasses.replace(config.builder.config, samples_per_insert_tolerance_rate=1e6)
        config = dataclasses.replace(config, builder=DQNBuilder(agent_config))
    if num_actors == 0:
        summary = launch.run_single_process(config)
        files = ["actor.csv"]
    else:
        summary = launch.run_distributed(config, num_actors=num_actors, launch_type=launch_type)
        files = [f"actor_{i}.csv" for i in range(num_actors)]
    summary["steady_steps_per_second"] = round(steady_rate(run_dir, files), 1)
    summary["rate_limiter"] = "tolerance opened" if unthrottled else "default"
    return summary


def run_one(
    num_actors: int, steps: int, timeout_s: float, unthrottled: bool = False, launch_type: str = "local_mp",
    inference: str = "local",
) -> dict:
    """One run in a subprocess (`worker`); `inference` "central": the actors' policy runs on an inference node."""
    run_dir = os.path.join(
        RUNS_DIR, (f"actors_{num_actors}" if num_actors else "single_process") + ("_open" if unthrottled else "")
        + ("" if launch_type == "local_mp" else f"_{launch_type}") + ("_central" if inference == "central" else ""),
    )
    command = [
        sys.executable,
        os.path.abspath(__file__),
        "--worker",
        str(num_actors),
        "--steps",
        str(steps),
        "--run-dir",
        run_dir,
    ]
    command += ["--unthrottled"] if unthrottled else []
    command += ["--launch", launch_type, "--inference", inference]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout_s, cwd=ROOT)
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {timeout_s:.0f} s", "actors": num_actors}
    lines = [line for line in done.stdout.splitlines() if line.startswith('{"agent"')]
    if done.returncode != 0 or not lines:
        return {"error": f"exit code {done.returncode}: {done.stderr.strip()[-2000:]}", "actors": num_actors}
    return json.loads(lines[-1])


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--out", default=None)
    parser.add_argument("--worker", type=int, default=None, help=argparse.SUPPRESS)  # actors (0: single process)
    parser.add_argument("--steps", type=int, default=None, help=argparse.SUPPRESS)
    parser.add_argument("--run-dir", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--unthrottled", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--launch", default="local_mp", help=argparse.SUPPRESS)  # also run by engine_overhead.py
    parser.add_argument("--inference", default="local", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker is not None:
        summary = worker(args.worker, args.steps, args.run_dir, args.unthrottled, args.launch, args.inference)
        print("\n" + json.dumps(summary), flush=True)  # Launchpad may leave a line unfinished
        return

    steps = 10_000 if args.quick else 40_000
    payload = header("distributed_scaling", quick=args.quick, seeds=[SEED])
    payload.update(agent=AGENT, env=ENV, steps_per_run=steps, launch_type="local_mp")
    missing = availability()
    title = "Distributed scaling: 2 actors vs 1 (local_mp, learner running)"
    if missing:
        print(missing)
        payload.update(
            available=False,
            reason=missing,
            runs=[],
            rows=[result_row(title, None, None, "env steps/s", GOAL, note=missing)],
        )
    else:
        runs = {}
        # Quick mode runs the goal's pair only (`make bench`'s < 15 minutes: each program pays ~30 s of start-up).
        plan = QUICK_RUNS if args.quick else FULL_RUNS
        for actors, unthrottled in plan:
            label = (f"{actors} actors" if actors else "single process") + (", limiter opened" if unthrottled else "")
            print(f"  running {label} ({steps} env steps) ...", flush=True)
            runs[(actors, unthrottled)] = run_one(actors, steps, 600 if not args.quick else 300, unthrottled)
            print(f"    {runs[(actors, unthrottled)]}", flush=True)

        def rate(actors, unthrottled=False, key="steady_steps_per_second"):
            return runs[(actors, unthrottled)].get(key)

        payload.update(available=True, runs=list(runs.values()))
        payload["rows"] = [
            result_row(title, rate(2), rate(1), "env steps/s", GOAL, ours_label="2 actors", baseline_label="1 actor"),
        ]
        if not args.quick:  # the informative rows' runs are full mode's
            payload["rows"] += [
                result_row(
                    "Distributed scaling: 4 actors vs 1 (local_mp)",
                    rate(4),
                    rate(1),
                    "env steps/s",
                    None,
                    ours_label="4 actors",
                    baseline_label="1 actor",
                    note="informative: 4 actors on 2 cores",
                ),
                result_row(
                    "Distributed 1 actor vs single process",
                    rate(1),
                    rate(0),
                    "env steps/s",
                    None,
                    ours_label="1 actor (local_mp)",
                    baseline_label="run_single_process",
                    note="informative",
                ),
                result_row(
                    "Distributed scaling, rate limiter opened: 2 actors vs 1",
                    rate(2, True),
                    rate(1, True),
                    "env steps/s",
                    None,
                    ours_label="2 actors",
                    baseline_label="1 actor",
                    note="informative: actors not held back by the learner",
                ),
            ]
        payload["compile_seconds"] = "inside each node; excluded from the steady rate (see README)"
    path = write_json("distributed_scaling", finish(payload), *([args.out] if args.out else []))
    print_rows(payload["rows"])
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
