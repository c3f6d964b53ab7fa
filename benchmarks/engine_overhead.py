"""Engine overhead: actor env steps/s of DQN on CartPole-v1 under Ray vs Launchpad local_mp, 1 and 2 actors.

The same program graph (`launch.engines.distributed.graph`) runs on both engines with its learner running, measured in one run
and interleaved (Launchpad, Ray, Launchpad, Ray) by `distributed_scaling.run_one`, each run a subprocess with a time
limit. The rate is distributed_scaling's steady rate: the actors' own steps / seconds inside episodes, from their
CSV logs (process start-up, imports and JIT compilation excluded). The ratio is Ray / Launchpad; goal: Ray within
10% of Launchpad (ratio >= 0.9) at 2 actors, since actors step locally and fetch parameters asynchronously on both.
Quick mode runs the 2 actors only.
Ray's start-up (`ray.init` of a local instance, from the run's summary) and each run's wall time are recorded too.
When Ray cannot be imported the result says "not available" and nothing runs.

    python benchmarks/engine_overhead.py [--quick] [--out DIR]
"""

import argparse
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from benchmarks.common import finish, header, print_rows, result_row, write_json  # noqa: E402
from benchmarks.distributed_scaling import AGENT, ENV, SEED, availability, run_one  # noqa: E402

GOAL = 0.9
ENGINES = ("local_mp", "ray")


def ray_availability():
    """None if the Ray engine can be imported, else why not."""
    missing = availability()
    if missing:
        return missing
    try:
        import ray  # noqa: F401

        from launch.engines.distributed.ray_engine import run_ray_program  # noqa: F401
    except ImportError as error:
        return f"not available: ray ({error})"
    return None


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--out", default=None)
    args = parser.parse_args(argv)
    steps = 4_000 if args.quick else 20_000
    payload = header("engine_overhead", quick=args.quick, seeds=[SEED])
    payload.update(agent=AGENT, env=ENV, steps_per_run=steps, engines=list(ENGINES))
    missing = ray_availability()
    title = "Engine overhead: Ray vs Launchpad local_mp, 2 actors (learner running)"
    if missing:
        print(missing)
        payload.update(available=False, reason=missing, runs=[],
                       rows=[result_row(title, None, None, "env steps/s", GOAL, note=missing)])
    else:
        runs = {}
        # Quick mode (`make bench`'s < 15 minutes) runs the goal's 2 actors only: each program pays ~30 s of start-up.
        for actors in (2,) if args.quick else (1, 2):
            for engine in ENGINES:
                print(f"  running {engine}, {actors} actor(s) ({steps} env steps) ...", flush=True)
                runs[(engine, actors)] = {**run_one(actors, steps, 300 if args.quick else 600, launch_type=engine),
                                          "engine": engine}
                print(f"    {runs[(engine, actors)]}", flush=True)

        def rate(engine, actors):
            return runs[(engine, actors)].get("steady_steps_per_second")

        payload.update(available=True, runs=list(runs.values()))
        payload["ray_init_seconds"] = [run.get("ray_init_seconds") for (engine, _), run in runs.items() if engine == "ray"]
        payload["wall_seconds"] = {f"{engine}_{actors}": runs[(engine, actors)].get("wall_seconds")
                                   for engine, actors in runs}
        ray_2, launchpad_2 = rate("ray", 2), rate("local_mp", 2)
        # The published figure to put ours beside: Lingua Franca reports 1.21x Ray's throughput on the same kind
        # of sampling (actors stepping environments, a learner consuming). Ours is Launchpad's over Ray's.
        payload["launchpad_over_ray_2_actors"] = round(launchpad_2 / ray_2, 3) if ray_2 and launchpad_2 else None
        beside = (f"Launchpad/Ray {payload['launchpad_over_ray_2_actors']}x; Lingua Franca reports 1.21x over Ray"
                  if payload["launchpad_over_ray_2_actors"] else "")
        payload["rows"] = [
            result_row(title, ray_2, launchpad_2, "env steps/s", GOAL,
                       ours_label="Ray", baseline_label="Launchpad local_mp", note=beside),
        ]
        if not args.quick:  # the 1-actor runs are full mode's
            payload["rows"].append(result_row(
                "Engine overhead: Ray vs Launchpad local_mp, 1 actor", rate("ray", 1), rate("local_mp", 1),
                "env steps/s", None, ours_label="Ray", baseline_label="Launchpad local_mp", note="informative"))
    path = write_json("engine_overhead", finish(payload), *([args.out] if args.out else []))
    print_rows(payload["rows"])
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
