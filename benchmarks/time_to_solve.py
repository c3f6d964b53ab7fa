"""Time to solve CartPole-v1 (the last 20 training episodes average >= 475): our DQN and PPO against SBX's.

Every (library, agent, seed) runs in a fresh process, so each pays its own imports and JIT compilation, and the
two libraries alternate seed by seed on the same machine. Wall time counts from just before the agent is built
(ours: `launch.run_single_process`; SBX: the model's constructor) until training stops at the threshold;
JAX's own compile time inside it is reported separately (its monitoring events), as is the run time without it.

Ours: `launch.make_experiment_config(agent, "CartPole-v1", stop_at_average_return=475)` with the agents'
default configs. SBX: `benchmarks/sbx_time_to_solve.py` in the benchmark venv with rl-baselines3-zoo's
hyperparameters. A run that does not reach 475 within its step cap counts as unsolved (infinite time and steps
in the median). Goals: median wall time <= 0.5x SBX's, median env steps <= SBX's.

    python benchmarks/time_to_solve.py [--quick] [--seeds 0 1 2] [--sbx-python .venv-bench/bin/python] [--out DIR]
"""

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from benchmarks.common import CompileMeter, finish, header, print_rows, result_row, write_json  # noqa: E402

THRESHOLD = 475.0
OUR_STEP_CAP = {"dqn": 100_000, "ppo": 200_000}
AGENTS = ("dqn", "ppo")
WALL_GOAL, STEPS_GOAL = 0.5, 1.0


def ours_worker(agent: str, seed: int) -> dict:
    import launch

    meter = CompileMeter.install()
    config = launch.make_experiment_config(
        agent=agent,
        environment="CartPole-v1",
        max_num_actor_steps=OUR_STEP_CAP[agent],
        seed=seed,
        stop_at_average_return=THRESHOLD,
        progress_period_s=1e9,
    )
    meter.reset()
    start = time.perf_counter()
    summary = launch.run_single_process(config)
    wall = time.perf_counter() - start
    return {
        "library": "acmelike",
        "agent": agent,
        "seed": seed,
        "solved": summary["steps_to_threshold"] is not None,  # CartPole-v1's reward_threshold, 475
        "steps_to_475": summary["steps_to_threshold"],
        "env_steps": summary["env_steps"],
        "wall_seconds": round(wall, 2),
        "compile_seconds": round(meter.seconds, 2),
        "num_compilations": meter.count,
        "average_return_last_20": summary["average_return_last_20"],
        "episodes": summary["episodes"],
        "learner_steps": summary["learner_steps"],
        "max_env_steps": OUR_STEP_CAP[agent],
    }


def run_process(command, timeout_s: float, env=None) -> dict:
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout_s, cwd=ROOT, env=env)
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {timeout_s:.0f} s"}
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    if done.returncode != 0 or not lines:
        return {"error": f"exit code {done.returncode}: {done.stderr.strip()[-2000:]}"}
    return json.loads(lines[-1])


def median_or_inf(runs, key):
    values = [run[key] if run.get("solved") else math.inf for run in runs if "error" not in run]
    return statistics.median(values) if values else None


def summarize(runs):
    solved = [run for run in runs if run.get("solved")]
    finite = lambda x: None if x is None or math.isinf(x) else round(x, 2)  # noqa: E731
    return {
        "runs": len(runs),
        "solved": len(solved),
        "median_wall_seconds": finite(median_or_inf(runs, "wall_seconds")),
        "median_steps_to_475": finite(median_or_inf(runs, "steps_to_475")),
        "median_compile_seconds": (
            round(statistics.median(r["compile_seconds"] for r in runs), 2)
            if runs and all("compile_seconds" in r for r in runs)
            else None
        ),
        "median_run_seconds_without_compile": (
            round(statistics.median(r["wall_seconds"] - r["compile_seconds"] for r in solved), 2) if solved else None
        ),
    }


def make_rows(runs, agents, num_seeds: int, problem):
    """Two rows per agent (wall time, env steps to solve), and the per-library summaries."""
    rows, summaries = [], {}
    for agent in agents:
        ours, theirs = summarize(runs[("acmelike", agent)]), (
            summarize(runs[("sbx", agent)]) if problem is None else None
        )
        summaries[agent] = {"acmelike": ours, "sbx": theirs}
        note = problem or f"solved: ours {ours['solved']}/{ours['runs']}, SBX {theirs['solved']}/{theirs['runs']}"
        for key, title, unit, goal in (
            (
                "median_wall_seconds",
                f"Time to solve CartPole-v1, {agent.upper()} "
                f"(median of {num_seeds} seed{'s' if num_seeds > 1 else ''})",
                "wall s",
                WALL_GOAL,
            ),
            ("median_steps_to_475", f"Env steps to solve CartPole-v1, {agent.upper()}", "env steps", STEPS_GOAL),
        ):
            row_note = note
            if theirs is not None and theirs[key] is None and theirs["runs"] and ours[key] is not None:
                # SBX's median run did not solve within its cap: there is no ratio to claim a goal with.
                row_note = note + " (SBX's median run did not solve within its step cap: no ratio)"
            rows.append(
                result_row(
                    title,
                    ours[key],
                    None if theirs is None else theirs[key],
                    unit,
                    goal,
                    lower_is_better=True,
                    ours_label=f"acmelike {agent.upper()}",
                    baseline_label=f"SBX {agent.upper()}" + (" (zoo hyperparameters)" if unit == "wall s" else ""),
                    note=row_note,
                )
            )
    return rows, summaries


def sbx_problem(sbx_python: str):
    if not sbx_python or not os.path.exists(sbx_python):
        return f"SBX venv not found at {sbx_python!r} (make bench creates .venv-bench)"
    check = subprocess.run([sbx_python, "-c", "import sbx, torch"], capture_output=True, text=True)
    if check.returncode != 0:
        return f"SBX does not import in {sbx_python}: {check.stderr.strip().splitlines()[-1:]}"
    return None


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="one seed")
    parser.add_argument("--seeds", type=int, nargs="*", default=None)
    parser.add_argument("--agents", nargs="*", default=list(AGENTS), choices=AGENTS)
    parser.add_argument("--sbx-python", default=os.path.join(ROOT, ".venv-bench", "bin", "python"))
    parser.add_argument("--out", default=None)
    parser.add_argument("--worker", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--seed", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--rows-from", default=None, help="recompute the rows of a time_to_solve.json in place")
    args = parser.parse_args(argv)
    if args.worker:
        print("\n" + json.dumps(ours_worker(args.worker, args.seed)), flush=True)
        return
    if args.rows_from:
        with open(args.rows_from) as f:
            payload = json.load(f)
        agents = sorted({run["agent"] for run in payload["runs"]}, key=AGENTS.index)
        runs = {(library, agent): [] for library in ("acmelike", "sbx") for agent in agents}
        for run in payload["runs"]:
            runs[(run["library"], run["agent"])].append(run)
        payload["rows"], payload["summaries"] = make_rows(runs, agents, len(payload["seeds"]), payload["sbx_problem"])
        with open(args.rows_from, "w") as f:
            json.dump(payload, f, indent=2)
        print_rows(payload["rows"])
        return

    seeds = args.seeds if args.seeds is not None else ([0] if args.quick else [0, 1, 2])
    payload = header("time_to_solve", quick=args.quick, seeds=seeds)
    problem = sbx_problem(args.sbx_python)
    sbx_env = dict(os.environ, JAX_PLATFORMS="cpu")
    runs = {(library, agent): [] for library in ("acmelike", "sbx") for agent in args.agents}
    for seed in seeds:
        for agent in args.agents:
            print(f"  seed {seed} {agent}: ours ...", flush=True)
            ours = run_process([sys.executable, os.path.abspath(__file__), "--worker", agent, "--seed", str(seed)], 900)
            ours.setdefault("library", "acmelike"), ours.setdefault("agent", agent), ours.setdefault("seed", seed)
            runs[("acmelike", agent)].append(ours)
            print(f"    {_brief(ours)}", flush=True)
            if problem is None:
                print(f"  seed {seed} {agent}: SBX ...", flush=True)
                command = [
                    args.sbx_python,
                    os.path.join(ROOT, "benchmarks", "sbx_time_to_solve.py"),
                    "--agent",
                    agent,
                    "--seed",
                    str(seed),
                ]
                theirs = run_process(command, 900, env=sbx_env)
                theirs.setdefault("library", "sbx"), theirs.setdefault("agent", agent), theirs.setdefault("seed", seed)
                runs[("sbx", agent)].append(theirs)
                print(f"    {_brief(theirs)}", flush=True)

    rows, summaries = make_rows(runs, args.agents, len(seeds), problem)
    payload.update(
        threshold=THRESHOLD,
        window=20,
        our_step_caps=OUR_STEP_CAP,
        sbx_available=problem is None,
        sbx_problem=problem,
        sbx_python=args.sbx_python,
        summaries=summaries,
        runs=[run for key in runs for run in runs[key]],
        rows=rows,
    )
    path = write_json("time_to_solve", finish(payload), *([args.out] if args.out else []))
    print_rows(rows)
    print(f"wrote {path}")


def _brief(run: dict) -> str:
    if "error" in run:
        return f"ERROR {run['error'][:300]}"
    return (
        f"solved={run['solved']} steps_to_475={run['steps_to_475']} wall={run['wall_seconds']} s "
        f"(compile {run['compile_seconds']} s) avg20={run['average_return_last_20']}"
    )


if __name__ == "__main__":
    main()
