"""Start-up of a single-process run: the default (the seeded local replay, no TensorFlow) against `--replay reverb`
(an embedded Reverb server, and with it TensorFlow: what every single-process run loaded before the local replay
became the default).

Each side is a fresh `python -m launch --agent dqn --env CartPole-v1 --steps STEPS` subprocess, interleaved
(reverb, local, local, reverb, ...) so that drift in the machine's load hits both alike. Two figures per side:
the process's wall time (interpreter start, imports, restart with the bind-address library, JIT compilation,
the few hundred steps) and the time to import the command line alone (`python -c "import launch.cli.train"`,
where TensorFlow is loaded only if something imports it). The ratio is local / reverb; goal: <= 0.75 (a quarter
of a short run's wall time was TensorFlow and Reverb). The XLA compilation cache is off in both, so neither side
skips its compile.

    python benchmarks/startup_time.py [--quick] [--out DIR]
"""

import argparse
import os
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from benchmarks.common import RESULTS_DIR, finish, header, print_rows, result_row, write_json  # noqa: E402

GOAL = 0.75
STEPS = 300
SIDES = {"local": [], "reverb": ["--replay", "reverb"]}
IMPORT_ONLY = "import launch.cli.train, sys; assert ('tensorflow' in sys.modules) == (sys.argv[1] == 'reverb')"


def _timed(command, environment) -> float:
    start = time.perf_counter()
    result = subprocess.run(command, cwd=ROOT, env=environment, capture_output=True, text=True, timeout=600)
    elapsed = time.perf_counter() - start
    if result.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} exited with {result.returncode}: {result.stderr[-2000:]}")
    return elapsed


def _commands(side: str):
    """(the short run, the import alone) for `side`; the import side loads what the run's replay would."""
    run = [sys.executable, "-m", "launch", "--agent", "dqn", "--env", "CartPole-v1", "--steps", str(STEPS),
           "--compilation-cache", "off", *SIDES[side]]
    preload = "from acmelike.replay import reverb_tables; " if side == "reverb" else ""
    imports = [sys.executable, "-c", preload + IMPORT_ONLY, side]
    return run, imports


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--out", default=RESULTS_DIR)
    args = parser.parse_args(argv)
    repeats = 3 if args.quick else 7
    payload = header("startup_time", quick=args.quick, seeds=[0])
    try:
        import reverb  # noqa: F401
    except ImportError as error:
        reason = f"not available: the baseline needs dm-reverb, the classic stack's ({error})"
        print(reason)
        payload.update(available=False, reason=reason,
                       rows=[result_row("Start-up: default vs --replay reverb", None, None, "s", GOAL,
                                        lower_is_better=True, note=reason)])
        print(f"wrote {write_json('startup_time', finish(payload), args.out)}")
        return payload
    environment = {**os.environ, "PYTHONPATH": ROOT + os.pathsep + os.environ.get("PYTHONPATH", "")}
    times = {kind: {side: [] for side in SIDES} for kind in ("run", "import")}
    for i in range(repeats):
        order = ("reverb", "local") if i % 2 == 0 else ("local", "reverb")
        for side in order:
            run, imports = _commands(side)
            times["run"][side].append(_timed(run, environment))
            times["import"][side].append(_timed(imports, environment))
    payload.update(available=True, steps=STEPS, repeats=repeats,
                   seconds={kind: {side: [round(t, 3) for t in values] for side, values in sides.items()}
                            for kind, sides in times.items()})
    rows = []
    for kind, title in (("run", f"Start-up: a {STEPS}-step DQN CartPole run, default vs --replay reverb"),
                        ("import", "Start-up: importing the command line, default vs with Reverb and TensorFlow")):
        ratios = [ours / base for ours, base in zip(times[kind]["local"], times[kind]["reverb"])]
        rows.append(result_row(title, statistics.median(times[kind]["local"]),
                               statistics.median(times[kind]["reverb"]), "s", GOAL,
                               ratio=statistics.median(ratios), lower_is_better=True,
                               ours_label="default (local replay)", baseline_label="--replay reverb",
                               note=f"median of {repeats} interleaved subprocesses; ratio: median of paired ratios"))
    payload["rows"] = rows
    print_rows(rows)
    print(f"wrote {write_json('startup_time', finish(payload), args.out)}")
    return payload


if __name__ == "__main__":
    main()
