"""What an accelerator gives: the three measurements of issue 45, each against its baseline in the same run, on the
device JAX picks (a GPU where `.[cuda]` is installed and one is visible).

1. **Anakin PPO at scale**: gymnax CartPole-v1 on 2,048 environments x 128 steps per update, our
   `launch.engines.anakin` PPO against the PureJaxRL-style loop of benchmarks/anakin_ppo.py, same configuration,
   alternating seeds; env steps/s of the jitted run (compilation apart).
2. **Learner SGD steps/s on 84x84 frames**: R2D2 (64 x 80 steps, burn-in 40) and IMPALA (32 x 21 steps), Nature-DQN
   torso and a 512-unit LSTM (benchmarks/learner_throughput.py's cases): `SGDLearner` against a bare jitted loop.
3. **Central inference on the accelerator**: DQN on CartPole-v1 as a Ray program with 8 actor processes (the
   rate limiter's tolerance opened, so that acting is measured), `--inference central` (one batched policy step on
   the learner's device for every actor: `acmelike.placement`) against `--inference local` (each actor's own
   policy on its CPU); actors' steady env steps/s.

The whole run is sized to finish in under 8 minutes on one GPU; a section that would start past `--budget-s` is
skipped and says so. `--dry` runs every section at toy sizes on whatever device is there (a CPU: 2-3 minutes), to
check the script end to end; its figures say nothing about an accelerator.

    python benchmarks/accelerator.py [--dry] [--budget-s 420] [--out DIR]

Writes `accelerator.json` (or `accelerator_dry.json`) and prints the table that goes into benchmarks/README.md.
"""

import argparse
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import jax  # noqa: E402
import numpy as np  # noqa: E402

from benchmarks.common import finish, header, print_rows, result_row, write_json  # noqa: E402

# (num_envs, num_steps per update, updates, repeats): full and dry sizes.
PPO_SIZES = {"full": (2048, 128, 40, 3), "dry": (16, 16, 4, 1)}
# Learner calls per repeat, repeats, and the sequence batch (None: the papers' sizes in learner_throughput.py).
LEARNER_SIZES = {"full": (30, 3, None), "dry": (1, 1, 2)}
# Actors, env steps per program, time limit per program (s).
INFERENCE_SIZES = {"full": (8, 60_000, 240), "dry": (2, 1_500, 240)}


def anakin_ppo_at_scale(size: str):
    """Section 1: rows and a record."""
    from benchmarks.anakin_ppo import make_baseline, make_ours, paired_runs

    num_envs, num_steps, updates, repeats = PPO_SIZES[size]
    env_steps = num_envs * num_steps * updates
    agent = make_ours(num_envs, num_steps, env_steps)
    iterations = env_steps // agent.rows_per_iteration
    # One compile per run: a lent device's minutes are few, and this section's goal is the run's rate.
    runs, ours_compile, baseline_compile = paired_runs(
        agent, iterations, make_baseline(num_envs, num_steps, updates), repeats, baseline_env_steps=env_steps,
        compiles=repeats)
    rates = {side: statistics.median(env_steps / run["seconds"] for run in runs[side]) for side in runs}
    label = f"Anakin PPO, gymnax CartPole, {num_envs} envs x {num_steps} steps"
    rows = [
        result_row(label, rates["ours"], rates["baseline"], "env steps/s", 1.0, ours_label="launch.engines.anakin PPO",
                   baseline_label="PureJaxRL-style PPO", note=f"{updates} updates, median of {repeats} seeds"),
        result_row(f"{label}: compile", ours_compile[0], baseline_compile[0], "s", 1.0, lower_is_better=True,
                   ours_label="launch.engines.anakin PPO", baseline_label="PureJaxRL-style PPO"),
    ]
    return rows, {"num_envs": num_envs, "num_steps": num_steps, "updates": updates, "runs": runs}


def learner_steps_on_frames(size: str):
    """Section 2: one row per agent (SGDLearner against the bare jitted loop) and the records."""
    from benchmarks import learner_throughput as throughput

    calls, repeats, batch_size = LEARNER_SIZES[size]
    rows, records = [], []
    spec, rng = throughput.atari_like_spec(), np.random.default_rng(0)
    for name, make_case in (("r2d2", throughput.r2d2_case), ("impala", throughput.impala_case)):
        case = make_case(spec, rng, **({} if batch_size is None else {"batch_size": batch_size}))
        record = throughput.measure(name, case, calls, repeats, throughput.agent_loss_keys(name))
        records.append(record)
        rows.append(result_row(
            f"{name.upper()} learner on 84x84 frames", record["sgd_learner_sgd_steps_per_s"],
            record["bare_jitted_loop_sgd_steps_per_s"], "SGD steps/s", 0.95, ours_label="SGDLearner",
            baseline_label="bare jitted loop", note=record["batch"]))
    return rows, records


def central_inference(size: str):
    """Section 3: a Ray program with central inference against local inference."""
    from benchmarks.distributed_scaling import run_one

    actors, steps, limit_s = INFERENCE_SIZES[size]
    runs = {}
    for inference in ("local", "central"):
        print(f"  Ray program, {actors} actors, --inference {inference} ({steps} env steps) ...", flush=True)
        runs[inference] = run_one(actors, steps, limit_s, unthrottled=True, launch_type="ray", inference=inference)
        print(f"    {runs[inference]}", flush=True)
    rate = {name: run.get("steady_steps_per_second") for name, run in runs.items()}
    rows = [result_row(f"Ray DQN, {actors} actors: central inference on {jax.default_backend()}", rate["central"],
                       rate["local"], "env steps/s", None, ours_label="--inference central",
                       baseline_label="--inference local", note="actors' steady rate, rate limiter opened")]
    return rows, runs


SECTIONS = (("anakin_ppo_at_scale", anakin_ppo_at_scale), ("learner_steps_on_frames", learner_steps_on_frames),
            ("central_inference", central_inference))


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dry", action="store_true", help="toy sizes on any device: checks the script end to end")
    parser.add_argument("--budget-s", type=float, default=420.0, help="start no section after this many seconds")
    parser.add_argument("--out", default=None, help="results directory (default benchmarks/results)")
    args = parser.parse_args(argv)
    size = "dry" if args.dry else "full"
    name = "accelerator_dry" if args.dry else "accelerator"
    payload = header(name, quick=args.dry, seeds=[0],
                     packages=["jax", "jaxlib", "jax-cuda12-plugin", "flax", "optax", "gymnax", "ray", "numpy"])
    devices = jax.devices()
    payload.update(device=f"{jax.default_backend()}: {devices[0].device_kind} x {len(devices)}", size=size)
    print(f"accelerator benchmark ({size}) on {payload['device']}", flush=True)
    if not args.dry and jax.default_backend() == "cpu":
        print("  no accelerator is visible (jax.default_backend() is cpu): these are CPU figures", flush=True)
    start, rows = time.perf_counter(), []
    for section, run in SECTIONS:
        elapsed = time.perf_counter() - start
        if elapsed > args.budget_s:
            payload[section] = {"skipped": f"the budget of {args.budget_s:.0f} s was spent ({elapsed:.0f} s)"}
            print(f"{section}: skipped, {payload[section]['skipped']}", flush=True)
            continue
        print(f"{section} ...", flush=True)
        section_start = time.perf_counter()
        section_rows, record = run(size)
        rows += section_rows
        payload[section] = {"seconds": round(time.perf_counter() - section_start, 1), "record": record}
    print_rows(rows)
    payload.update(rows=rows, seconds=round(time.perf_counter() - start, 1))
    path = write_json(name, finish(payload), **({"results_dir": args.out} if args.out else {}))
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
