"""The Ray engine's replay node serving the local tables against the Reverb-backed Ray program: DQN on CartPole-v1.

The same DQN program runs on Ray with its replay node either serving the local replay's tables
(`launch.engines.distributed.replay_node`, the default, the only one on Python 3.12+) or a Reverb server
(`config.replay="reverb"`, the Ray program as it was), in one run of this script on the classic stack, where both
exist, interleaved (reverb, local, ...); each program is a subprocess with a time limit. Full mode adds 1 actor and
Launchpad's local_mp program (Reverb). Each program runs until its learner has stepped for `WARMUP_S` + the
window (30 s quick, 90 s full), then is stopped (SIGINT, as Ctrl-C). Two steady rates over the window, with the
learner running, from the counter node's counts (`progress.json`, read every 0.5 s by a thread of the worker):

* sampled: items the learner sampled per second (learner SGD steps x batch_size): the rate the replay node serves.
  The goal's ratio: local / Reverb >= 1.0 at 2 actors.
* env steps/s: the actors' steps per second (DQN's rate limiter ties them to the learner's rate).

    python benchmarks/ray_replay.py [--quick] [--out DIR]      # on the classic stack (.venv-launchpad)
"""

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from benchmarks.common import finish, header, print_rows, result_row, write_json  # noqa: E402

AGENT, ENV, SEED, GOAL = "dqn", "CartPole-v1", 0, 1.0
RUNS_DIR = os.path.join(ROOT, "runs", "bench-ray-replay")
WARMUP_S = 5.0  # after the learner's first step: compilation and the replay's fill are behind
BUDGET = 10**9  # env steps: each program is stopped after its window


def availability():
    """None if Ray and Reverb can both be imported here, else why not."""
    for module in ("ray", "reverb"):
        try:
            __import__(module)
        except ImportError as error:
            return f"not available: {module} cannot be imported ({error}); run on the classic stack"
    return None


def steady_rates(samples, batch: int) -> dict:
    """{sampled, env_steps}/s between the first count with learner steps + WARMUP_S and the last count."""
    learning = [(t, counts) for t, counts in samples if counts.get("learner_sgd_steps", 0) > 0]
    if len(learning) < 2:
        return {}
    start = next(((t, c) for t, c in learning if t >= learning[0][0] + WARMUP_S), learning[0])
    end = learning[-1]
    seconds = end[0] - start[0]
    if seconds <= 0:
        return {}
    return {
        "sampled_per_second": round((end[1]["learner_sgd_steps"] - start[1]["learner_sgd_steps"]) * batch / seconds, 1),
        "env_steps_per_second": round((end[1]["actor_steps"] - start[1]["actor_steps"]) / seconds, 1),
        "window_seconds": round(seconds, 1),
    }


def worker(num_actors: int, window_s: float, run_dir: str, replay: str, launch_type: str) -> dict:
    import dataclasses

    import launch

    shutil.rmtree(run_dir, ignore_errors=True)
    config = launch.make_experiment_config(
        agent=AGENT, environment=ENV, max_num_actor_steps=BUDGET, seed=SEED, run_dir=run_dir, progress_period_s=1e9,
    )
    config = dataclasses.replace(config, replay=replay)
    samples, done = [], threading.Event()

    def watch():  # then stops the program as Ctrl-C does, once the window is over
        path = os.path.join(run_dir, "progress.json")
        learning_since = None
        while not done.wait(0.5):
            try:
                with open(path) as f:
                    samples.append((time.time(), json.load(f)))
            except (OSError, ValueError):
                continue
            if learning_since is None and samples[-1][1].get("learner_sgd_steps", 0) > 0:
                learning_since = samples[-1][0]
            if learning_since is not None and time.time() >= learning_since + WARMUP_S + window_s:
                os.kill(os.getpid(), signal.SIGINT)
                return

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    summary = launch.run_distributed(config, num_actors=num_actors, launch_type=launch_type)
    done.set()
    watcher.join()
    agent = config.builder.config
    summary.update(steady_rates(samples, agent.batch_size), replay=replay, actors=num_actors)
    return summary


def run_one(num_actors: int, window_s: float, replay: str, launch_type: str, timeout_s: float) -> dict:
    run_dir = os.path.join(RUNS_DIR, f"{launch_type}_{replay}_{num_actors}")
    command = [sys.executable, os.path.abspath(__file__), "--worker", str(num_actors), "--window", str(window_s),
               "--run-dir", run_dir, "--replay", replay, "--launch", launch_type]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout_s, cwd=ROOT)
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {timeout_s:.0f} s", "actors": num_actors, "replay": replay}
    lines = [line for line in done.stdout.splitlines() if line.startswith('{"agent"')]
    if done.returncode != 0 or not lines:
        return {"error": f"exit code {done.returncode}: {done.stderr.strip()[-2000:]}", "actors": num_actors,
                "replay": replay}
    return json.loads(lines[-1])


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--out", default=None)
    parser.add_argument("--worker", type=int, default=None, help=argparse.SUPPRESS)
    parser.add_argument("--window", type=float, default=None, help=argparse.SUPPRESS)
    parser.add_argument("--run-dir", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--replay", default="local", help=argparse.SUPPRESS)
    parser.add_argument("--launch", default="ray", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker is not None:
        summary = worker(args.worker, args.window, args.run_dir, args.replay, args.launch)
        print("\n" + json.dumps(summary), flush=True)
        return

    window = 30.0 if args.quick else 90.0
    payload = header("ray_replay", quick=args.quick, seeds=[SEED], packages=["ray", "dm-reverb", "jax"])
    payload.update(agent=AGENT, env=ENV, window_seconds=window, warmup_seconds=WARMUP_S)
    missing = availability()
    title = "Ray replay node, local tables vs Reverb: items sampled/s (DQN, 2 actors)"
    if missing:
        print(missing)
        payload.update(available=False, reason=missing, runs=[],
                       rows=[result_row(title, None, None, "items/s", GOAL, note=missing)])
        print(write_json("ray_replay", finish(payload), *([args.out] if args.out else [])))
        return
    # (actors, replay, engine); Reverb first, so neither side always runs on a warmer machine.
    plan = [(2, "reverb", "ray"), (2, "local", "ray")]
    if not args.quick:
        plan += [(1, "reverb", "ray"), (1, "local", "ray"), (2, "reverb", "local_mp"), (1, "reverb", "local_mp")]
    runs = {}
    for actors, replay, engine in plan:
        print(f"  running {engine}, replay {replay}, {actors} actors ({window:.0f} s learning) ...", flush=True)
        run = run_one(actors, window, replay, engine, 420 if args.quick else 600)
        if "error" in run:  # Ray's start-up can time out on a loaded machine (its raylet waits 15 s for its agents)
            print(f"    failed ({run['error'][-300:]}), once more ...", flush=True)
            run = {**run_one(actors, window, replay, engine, 420 if args.quick else 600), "first_try": run["error"]}
        runs[(actors, replay, engine)] = run
        print(f"    {runs[(actors, replay, engine)]}", flush=True)

    def rate(actors, replay, engine="ray", key="sampled_per_second"):
        return runs.get((actors, replay, engine), {}).get(key)

    payload.update(available=True, runs=list(runs.values()))
    payload["rows"] = [
        result_row(title, rate(2, "local"), rate(2, "reverb"), "items/s", GOAL, ours_label="local tables",
                   baseline_label="Reverb"),
        result_row("Ray replay node, local tables vs Reverb: env steps/s (DQN, 2 actors)",
                   rate(2, "local", key="env_steps_per_second"), rate(2, "reverb", key="env_steps_per_second"),
                   "env steps/s", None, ours_label="local tables", baseline_label="Reverb", note="informative"),
    ]
    if not args.quick:
        payload["rows"] += [
            result_row("Ray replay node, local tables vs Reverb: items sampled/s (DQN, 1 actor)", rate(1, "local"),
                       rate(1, "reverb"), "items/s", None, ours_label="local tables", baseline_label="Reverb",
                       note="informative"),
            result_row("Ray (local tables) vs Launchpad local_mp (Reverb): items sampled/s (DQN, 2 actors)",
                       rate(2, "local"), rate(2, "reverb", "local_mp"), "items/s", None, ours_label="Ray",
                       baseline_label="local_mp", note="informative"),
            result_row("Ray (local tables) vs Launchpad local_mp (Reverb): items sampled/s (DQN, 1 actor)",
                       rate(1, "local"), rate(1, "reverb", "local_mp"), "items/s", None, ours_label="Ray",
                       baseline_label="local_mp", note="informative"),
        ]
        # Steady env steps/s with the learner running (DQN's rate limiter ties acting to learning).
        for actors in (1, 2):
            steps = {(replay, engine): rate(actors, replay, engine, key="env_steps_per_second")
                     for replay, engine in (("local", "ray"), ("reverb", "ray"), ("reverb", "local_mp"))}
            if actors == 1:
                payload["rows"].append(result_row(
                    "Ray replay node, local tables vs Reverb: env steps/s (DQN, 1 actor)", steps["local", "ray"],
                    steps["reverb", "ray"], "env steps/s", None, ours_label="local tables", baseline_label="Reverb",
                    note="informative"))
            payload["rows"].append(result_row(
                f"Ray (local tables) vs Launchpad local_mp (Reverb): env steps/s (DQN, {actors} actor"
                f"{'s' if actors > 1 else ''})", steps["local", "ray"], steps["reverb", "local_mp"], "env steps/s",
                None, ours_label="Ray", baseline_label="local_mp", note="informative"))
    path = write_json("ray_replay", finish(payload), *([args.out] if args.out else []))
    print_rows(payload["rows"])
    print(path)


if __name__ == "__main__":
    main()
