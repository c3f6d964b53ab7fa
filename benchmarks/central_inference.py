"""Central vs per-actor inference (issue 11): total actor env steps/s of DQN on CartPole-v1 with 4 and 8 actors
under Launchpad local_mp, learner running, with `--inference central` against `--inference local` in the same run.

Each run is `distributed_scaling.run_one` (a subprocess running `launch.run_distributed`); the rate is that
benchmark's steady rate (the actors' own rate inside episodes, from their CSV logs: start-up and compilation
excluded). The replay rate limiter's tolerance is opened (`samples_per_insert_tolerance_rate=1e6`) on both sides,
so the learner runs but does not hold the actors back: what is compared is how fast actors act. With central
inference each actor step is a round trip to the inference node (observation in, actions out, as arrays and JSON)
and one jitted call serves every actor's request together (up to `actors` observations, 2 ms batching timeout); locally
each actor runs its own jitted policy. No goal: the ratio is reported. On a 2-core machine all nodes share the
two cores, so this measures the CPU cost of the two designs, not what an accelerator would give the central one.

    python benchmarks/central_inference.py [--quick] [--out DIR]
"""

import argparse
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from benchmarks.common import finish, header, print_rows, result_row, write_json  # noqa: E402
from benchmarks.distributed_scaling import AGENT, ENV, SEED, availability, run_one  # noqa: E402

ACTORS = (4, 8)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--out", default=None)
    args = parser.parse_args(argv)

    steps = 6_000 if args.quick else 40_000
    payload = header("central_inference", quick=args.quick, seeds=[SEED])
    payload.update(agent=AGENT, env=ENV, steps_per_run=steps, launch_type="local_mp", rate_limiter="tolerance opened")
    missing = availability()
    if missing:
        print(missing)
        rows = [
            result_row(f"Central vs local inference, {n} actors (local_mp)", None, None, "env steps/s", None, note=missing)
            for n in ACTORS
        ]
        payload.update(available=False, reason=missing, runs=[], rows=rows)
    else:
        runs = {}
        for actors in ACTORS:
            for inference in ("local", "central"):
                print(f"  running {actors} actors, {inference} inference ({steps} env steps) ...", flush=True)
                run = run_one(actors, steps, 300 if args.quick else 900, unthrottled=True, inference=inference)
                runs[(actors, inference)] = run
                print(f"    {run}", flush=True)
        payload.update(available=True, runs=list(runs.values()))
        payload["rows"] = [
            result_row(
                f"Central vs local inference, {actors} actors (local_mp, learner running)",
                runs[(actors, "central")].get("steady_steps_per_second"),
                runs[(actors, "local")].get("steady_steps_per_second"),
                "env steps/s",
                None,
                ours_label="--inference central",
                baseline_label="--inference local",
                note="total actor steps/s inside episodes; rate limiter opened; informative (no goal)",
            )
            for actors in ACTORS
        ]
    path = write_json("central_inference", finish(payload), *([args.out] if args.out else []))
    print_rows(payload["rows"])
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
