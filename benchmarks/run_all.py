"""Runs every benchmark, then writes results/summary.md and the PNG plots: `make bench` calls this.

    python benchmarks/run_all.py --quick      # < 15 minutes on the 2-core machine (one seed for time-to-solve;
                                              # the informative FULL_ONLY benchmarks left out)
    python benchmarks/run_all.py --full       # longer loops, more repeats, 3 seeds
    python benchmarks/run_all.py --quick --only env_loop_overhead replay_throughput

Each benchmark runs in its own process (a failure is reported and the others still run), on today's stack (this
interpreter) unless it is one of `CLASSIC_STACK`: those measure Reverb, Launchpad or the --replay reverb baseline,
and run in the classic stack's venv, --classic-python (`make venv-launchpad`). The SBX side of time_to_solve runs
in the benchmark venv given by --sbx-python.
"""

import argparse
import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from benchmarks.common import RESULTS_DIR  # noqa: E402
from benchmarks.report import ORDER, write_report  # noqa: E402

BENCHMARKS = [
    "env_loop_overhead",
    "actor_throughput",
    "replay_throughput",
    "learner_throughput",
    "time_to_solve",
    "startup_time",
    "step_profile",
    "batched_acting",
    "anakin_ppo",
    "anakin_sac",
    "anakin_off_policy",
    "anakin_recurrent",
    "anakin_dqn",
    "anakin_muzero",
    "anakin_replay",
    "anakin_conv_torso",
    "distributed_scaling",
    "engine_overhead",
    "ray_replay",
    "central_inference",
    "multiagent_inference",
    "anakin_ippo",
]
CLASSIC_STACK = ("replay_throughput", "startup_time", "step_profile", "batched_acting", "distributed_scaling",
                 "engine_overhead", "ray_replay", "central_inference", "multiagent_inference")
# Informative only (no goal), and each several programs or many processes long: full mode runs them, quick mode
# (`make bench`, < 15 minutes from a fresh clone) only when named with --only.
FULL_ONLY = ("central_inference", "multiagent_inference", "ray_replay")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--quick", action="store_true", help="the default")
    mode.add_argument("--full", action="store_true")
    parser.add_argument("--only", nargs="*", choices=BENCHMARKS, default=None)
    parser.add_argument("--sbx-python", default=os.path.join(ROOT, ".venv-bench", "bin", "python"))
    parser.add_argument("--classic-python", default=os.path.join(ROOT, ".venv-launchpad", "bin", "python"))
    parser.add_argument("--out", default=RESULTS_DIR)
    args = parser.parse_args(argv)
    quick = not args.full
    names = args.only or [name for name in BENCHMARKS if not (quick and name in FULL_ONLY)]
    if not args.only and quick:
        print(f"quick mode leaves out {', '.join(FULL_ONLY)} (informative; --full or --only runs them)", flush=True)
    start = time.perf_counter()
    failed = []
    for name in names:
        python = args.classic_python if name in CLASSIC_STACK else sys.executable
        command = [python, os.path.join(ROOT, "benchmarks", f"{name}.py"), "--out", args.out]
        command += ["--quick"] if quick else []
        command += ["--sbx-python", args.sbx_python] if name == "time_to_solve" else []
        print(f"== {name} ({'quick' if quick else 'full'})", flush=True)
        began = time.perf_counter()
        code = subprocess.call(command, cwd=ROOT)
        print(
            f"== {name}: {'ok' if code == 0 else f'FAILED (exit {code})'} in {time.perf_counter() - began:.0f} s",
            flush=True,
        )
        if code != 0:
            failed.append(name)
    path = write_report(args.out, ORDER)  # every result present: this run's, and earlier ones of benchmarks not rerun
    print(open(path).read())
    print(f"wrote {path} and the PNG plots beside it; all benchmarks took {time.perf_counter() - start:.0f} s")
    if failed:
        print(f"failed: {', '.join(failed)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
