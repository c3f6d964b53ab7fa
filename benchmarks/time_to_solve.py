"""Time to solve: our DQN and PPO on CartPole-v1 (the last 20 training episodes average >= 475), and our SAC on
Pendulum-v1 (the last 10 average >= -250), against SBX's.

Every (library, agent, seed) runs in a fresh process, so each pays its own imports and JIT compilation, and the
two libraries alternate seed by seed on the same machine. Wall time counts from just before the agent is built
(ours: `launch.run_single_process`; SBX: the model's constructor) until training stops at the threshold;
JAX's own compile time inside it is reported separately (its monitoring events), as is the run time without it.

Ours: `launch.make_experiment_config(agent, env, stop_at_average_return=threshold, return_window=window)` with
the agents' default configs; `ppo_8envs` is PPO with `num_envs=8` (batched actor over gymnasium's numpy-vectorised
CartPole), compared with the same SBX PPO runs (zoo: 8 vectorised environments). SBX: `benchmarks/sbx_time_to_solve.py`
in the benchmark venv with rl-baselines3-zoo's hyperparameters, the same task (`sbx_time_to_solve.TASKS`). A run
that does not reach the threshold within its step cap counts as unsolved (infinite time and steps in the median).
Goals: median wall time <= 0.5x SBX's, median env steps <= SBX's.

Our replay is `--replay local` by default (`launch.make_experiment_config(replay=...)`): the seeded in-process
numpy tables, the fastest replay the single-process runner ships and the counterpart of SBX's in-process buffer;
`--replay reverb` runs the embedded Reverb server instead. Each run records its replay (`replay` in the JSON) and
the rows' labels say which one ours used.

Compilation cache: `--compilation-cache warm` (the default) gives our workers one fresh persistent XLA cache
for the whole benchmark (acmelike/compilation_cache.py, which `python -m launch` enables by default), and
primes it with one untimed short run per agent: the timed runs then load their executables, as a user's second
run of an agent does. `cold` gives every timed run an empty cache, so it compiles everything, as a first run does.
SBX has no such cache: its runs compile every time. Each run records which (`compilation_cache`).

XLA threading: our workers run with JAX's default CPU threading (`--xla-threads default`); `--xla-threads single`
sets `XLA_FLAGS=--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1` for them (a caller's own
XLA_FLAGS wins either way; SBX's runs are left as they were). benchmarks/step_profile.py measured single-threaded
against default on the 2-core VM (2026-11-24, load average 2.5-5 from other sessions, local replay, one process
each, alternating): wall time ratio single/default DQN 0.96, 0.99, 1.06; PPO 0.98; PPO 8 envs 1.02, 1.05; SAC 1.04,
1.17, 1.21. It does not help, and SAC's update (batch 256, 256x256 networks) loses its second core, so the default
stays.

    python benchmarks/time_to_solve.py [--quick] [--seeds 0 1 2] [--replay local|reverb] [--xla-threads default|single]
        [--compilation-cache warm|cold] [--sbx-python .venv-bench/bin/python] [--out DIR]
"""

import argparse
import json
import math
import os
import statistics
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from acmelike import files  # noqa: E402
from acmelike.xla_threads import use_single_threaded  # noqa: E402
from benchmarks.common import CompileMeter, finish, header, print_rows, result_row, write_json  # noqa: E402
from benchmarks.sbx_time_to_solve import TASKS  # noqa: E402

OUR_STEP_CAP = {"dqn": 100_000, "ppo": 200_000, "ppo_8envs": 200_000, "sac": 20_000}
AGENTS = ("dqn", "ppo", "ppo_8envs", "sac")
# Our variants beyond the registry's names: (agent, --num-envs). SBX's baseline for a variant is its base agent's.
VARIANTS = {"ppo_8envs": ("ppo", 8)}


def base_agent(agent: str) -> str:
    return VARIANTS.get(agent, (agent, 1))[0]


WALL_GOAL, STEPS_GOAL = 0.5, 1.0
REPLAYS = ("local", "reverb")
DEFAULT_REPLAY = "local"
XLA_THREADS = ("single", "default")
DEFAULT_XLA_THREADS = "default"
COMPILATION_CACHES = ("warm", "cold")
# Steps of the untimed run that primes a warm cache: past every agent's first learner step and first episode.
# SAC's learner starts at 1,000 steps and its steps cost ~6 ms each, so it stops sooner.
PRIMING_STEPS = {"sac": 1_500}
DEFAULT_PRIMING_STEPS = 3_000


def ours_environment(xla_threads: str) -> dict:
    """Our workers' environment: with `xla_threads` "single", XLA_FLAGS single-threaded unless the caller set
    XLA_FLAGS (theirs wins); with "default", the caller's environment as it is."""
    env = dict(os.environ)
    if xla_threads == "single":
        use_single_threaded(env)
    return env


def ours_worker(agent: str, seed: int, replay: str = DEFAULT_REPLAY, max_steps: int = 0) -> dict:
    """One timed run of ours in this process: `max_steps` (0: the agent's cap) bounds an untimed priming run."""
    import launch
    from acmelike import compilation_cache

    cache = compilation_cache.enable()  # the directory main() chose ($ACMELIKE_COMPILATION_CACHE)

    meter = CompileMeter.install()
    registered, num_envs = VARIANTS.get(agent, (agent, 1))
    task = TASKS[registered]
    config = launch.make_experiment_config(
        agent=registered,
        num_envs=num_envs,
        environment=task["env"],
        max_num_actor_steps=max_steps or OUR_STEP_CAP[agent],
        seed=seed,
        stop_at_average_return=task["threshold"],
        target_return=task["threshold"],
        return_window=task["window"],
        progress_period_s=1e9,
        replay=replay,
    )
    meter.reset()
    start = time.perf_counter()
    summary = launch.run_single_process(config)
    wall = time.perf_counter() - start
    return {
        "library": "acmelike",
        "agent": agent,
        "seed": seed,
        "replay": replay,
        "compilation_cache": os.environ.get("ACMELIKE_BENCH_CACHE_MODE", "warm" if cache else "off"),
        "xla_flags": os.environ.get("XLA_FLAGS"),
        "solved": summary["steps_to_threshold"] is not None
        and summary[f"average_return_last_{task['window']}"] >= task["threshold"],
        "env": task["env"],
        "threshold": task["threshold"],
        "window": task["window"],
        "steps_to_threshold": summary["steps_to_threshold"],
        "env_steps": summary["env_steps"],
        "wall_seconds": round(wall, 2),
        "compile_seconds": round(meter.seconds, 2),
        "num_compilations": meter.count,
        "average_return_last_window": summary[f"average_return_last_{task['window']}"],
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


def median_lower_bound(runs, key):
    """A lower bound on the median of `key` where unsolved runs count as infinite: each unsolved run's figure at
    its step cap (`wall_seconds`, `env_steps`) stands in for what solving would have taken, which is no less."""
    at_cap = {"wall_seconds": "wall_seconds", "steps_to_threshold": "env_steps"}[key]
    values = [run[key] if run.get("solved") else run[at_cap] for run in runs if "error" not in run]
    return round(statistics.median(values), 2) if values else None


def summarize(runs):
    solved = [run for run in runs if run.get("solved")]
    finite = lambda x: None if x is None or math.isinf(x) else round(x, 2)  # noqa: E731
    return {
        "runs": len(runs),
        "solved": len(solved),
        "median_wall_seconds": finite(median_or_inf(runs, "wall_seconds")),
        "median_steps_to_threshold": finite(median_or_inf(runs, "steps_to_threshold")),
        "median_wall_seconds_lower_bound": median_lower_bound(runs, "wall_seconds"),
        "median_steps_to_threshold_lower_bound": median_lower_bound(runs, "steps_to_threshold"),
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
            summarize(runs[("sbx", base_agent(agent))]) if problem is None else None
        )
        summaries[agent] = {"acmelike": ours, "sbx": theirs}
        env = TASKS[base_agent(agent)]["env"]
        note = problem or f"solved: ours {ours['solved']}/{ours['runs']}, SBX {theirs['solved']}/{theirs['runs']}"
        # Runs from before --replay existed used the runner's default then: Reverb.
        replays = "/".join(sorted({run.get("replay", "reverb") for run in runs[("acmelike", agent)]})) or "?"
        # Runs from before the cache existed compiled everything: cold.
        caches = "/".join(sorted({run.get("compilation_cache", "cold") for run in runs[("acmelike", agent)]})) or "?"
        for key, title, unit, goal in (
            (
                "median_wall_seconds",
                f"Time to solve {env}, {agent.upper()} "
                f"(median of {num_seeds} seed{'s' if num_seeds > 1 else ''})",
                "wall s",
                WALL_GOAL,
            ),
            ("median_steps_to_threshold", f"Env steps to solve {env}, {agent.upper()}", "env steps", STEPS_GOAL),
        ):
            row_note, baseline, ratio = note, None if theirs is None else theirs[key], None
            if theirs is not None and theirs[key] is None and theirs["runs"] and ours[key] is not None:
                # SBX's median run did not solve within its cap. Its figure at the cap is a lower bound on what
                # solving would have taken, so ours over it bounds the ratio from above: a goal met by the bound
                # is met.
                baseline = theirs.get(f"{key}_lower_bound")
                ratio = None if not baseline else ours[key] / baseline
                row_note = note + " (SBX's median run did not solve within its step cap: SBX's figure is its run at " \
                    "the cap, a lower bound, and the ratio an upper bound)"
            rows.append(
                result_row(
                    title,
                    ours[key],
                    baseline,
                    unit,
                    goal,
                    ratio=ratio,
                    lower_is_better=True,
                    ours_label=f"acmelike {agent.upper()} (--replay {replays}, {caches} compilation cache)",
                    baseline_label=f"SBX {base_agent(agent).upper()}"
                    + (" (zoo hyperparameters)" if unit == "wall s" else ""),
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
    parser.add_argument("--replay", default=DEFAULT_REPLAY, choices=REPLAYS,
                        help=f"our runs' replay (default {DEFAULT_REPLAY}); recorded in each run and row label")
    parser.add_argument("--xla-threads", default=DEFAULT_XLA_THREADS, choices=XLA_THREADS,
                        help=f"XLA CPU threading in our workers (default {DEFAULT_XLA_THREADS}; a caller's XLA_FLAGS "
                        "wins); SBX's runs keep their own")
    parser.add_argument("--compilation-cache", default="warm", choices=COMPILATION_CACHES,
                        help="warm (default): our timed runs load executables a priming run compiled; cold: each "
                        "timed run compiles everything")
    parser.add_argument("--sbx-python", default=os.path.join(ROOT, ".venv-bench", "bin", "python"))
    parser.add_argument("--out", default=None)
    parser.add_argument("--worker", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--seed", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--max-steps", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--rows-from", default=None, help="recompute the rows of a time_to_solve.json in place")
    args = parser.parse_args(argv)
    if args.worker:
        print("\n" + json.dumps(ours_worker(args.worker, args.seed, args.replay, args.max_steps)), flush=True)
        return
    if args.rows_from:
        with open(args.rows_from) as f:
            payload = json.load(f)
        agents = sorted({run["agent"] for run in payload["runs"]}, key=AGENTS.index)
        runs = {(library, agent): [] for library in ("acmelike", "sbx") for agent in agents}
        runs.update({("sbx", base_agent(agent)): [] for agent in agents})
        for run in payload["runs"]:
            runs[(run["library"], run["agent"])].append(run)
        payload["rows"], payload["summaries"] = make_rows(runs, agents, len(payload["seeds"]), payload["sbx_problem"])
        files.write_json(args.rows_from, payload)
        print_rows(payload["rows"])
        return

    seeds = args.seeds if args.seeds is not None else ([0] if args.quick else [0, 1, 2])
    payload = header("time_to_solve", quick=args.quick, seeds=seeds)
    problem = sbx_problem(args.sbx_python)
    sbx_env = dict(os.environ, JAX_PLATFORMS="cpu")
    ours_env = ours_environment(args.xla_threads)
    cache_root = tempfile.mkdtemp(prefix="acmelike-bench-xla-cache-")
    ours_env.update(ACMELIKE_COMPILATION_CACHE=cache_root, ACMELIKE_BENCH_CACHE_MODE=args.compilation_cache)

    def ours_command(agent, seed, max_steps=0):
        return [sys.executable, os.path.abspath(__file__), "--worker", agent, "--seed", str(seed), "--replay",
                args.replay, "--max-steps", str(max_steps)]

    if args.compilation_cache == "warm":
        for agent in args.agents:
            steps = PRIMING_STEPS.get(agent, DEFAULT_PRIMING_STEPS)
            print(f"  priming the compilation cache: {agent}, {steps} steps ...", flush=True)
            primed = run_process(ours_command(agent, seeds[0], steps), 900, env=ours_env)
            print(f"    {_brief(primed)}", flush=True)
    runs = {(library, agent): [] for library in ("acmelike", "sbx") for agent in args.agents}
    runs.update({("sbx", base_agent(agent)): [] for agent in args.agents})
    for seed in seeds:
        for agent in args.agents:
            print(f"  seed {seed} {agent}: ours ...", flush=True)
            if args.compilation_cache == "cold":
                shutil.rmtree(cache_root, ignore_errors=True)
            ours = run_process(ours_command(agent, seed), 900, env=ours_env)
            ours.setdefault("library", "acmelike"), ours.setdefault("agent", agent), ours.setdefault("seed", seed)
            runs[("acmelike", agent)].append(ours)
            print(f"    {_brief(ours)}", flush=True)
            sbx_agent = base_agent(agent)
            if problem is None and len(runs[("sbx", sbx_agent)]) <= seeds.index(seed):  # once per base agent
                print(f"  seed {seed} {sbx_agent}: SBX ...", flush=True)
                command = [
                    args.sbx_python,
                    os.path.join(ROOT, "benchmarks", "sbx_time_to_solve.py"),
                    "--agent",
                    sbx_agent,
                    "--seed",
                    str(seed),
                ]
                theirs = run_process(command, 900, env=sbx_env)
                theirs.setdefault("library", "sbx"), theirs.setdefault("agent", sbx_agent)
                theirs.setdefault("seed", seed)
                runs[("sbx", sbx_agent)].append(theirs)
                print(f"    {_brief(theirs)}", flush=True)

    shutil.rmtree(cache_root, ignore_errors=True)
    rows, summaries = make_rows(runs, args.agents, len(seeds), problem)
    payload.update(
        our_compilation_cache=args.compilation_cache,
        tasks={agent: TASKS[base_agent(agent)] for agent in args.agents},
        our_step_caps=OUR_STEP_CAP,
        our_replay=args.replay,
        our_xla_flags=ours_env.get("XLA_FLAGS"),
        sbx_xla_flags=sbx_env.get("XLA_FLAGS"),
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
        f"solved={run['solved']} steps_to_threshold={run['steps_to_threshold']} wall={run['wall_seconds']} s "
        f"(compile {run['compile_seconds']} s) average={run['average_return_last_window']}"
    )


if __name__ == "__main__":
    main()
