"""`python -m benchmarks.results_runner --suite NAME`: train a suite's missing cells, then write its page.

    python -m benchmarks.results_runner --suite classic                      # every cell, 5 seeds
    python -m benchmarks.results_runner --suite classic --agents ppo --tasks CartPole-v1 --seeds 0-1
    python -m benchmarks.results_runner --suite mujoco --list                # what is done, failed, missing
    python -m benchmarks.results_runner --suite minatar --report-only        # rewrite the page from the cells
    python -m benchmarks.results_runner --suite classic --evaluate-missing   # greedy returns for older cells

Cells run one after another (`--jobs N`: N at once; their wall and CPU seconds then share the machine, and each
record says so). Exit code 0 when every requested cell is finished, 1 if one failed (the others still ran).
"""

import argparse
import concurrent.futures
import os
import sys
import time
from typing import List, Optional, Sequence

from benchmarks.results_runner.cells import add_missing_evaluations, cell_path, groups, run_group, shown
from benchmarks.results_runner.report import describe, write_report
from benchmarks.results_runner.suites import SUITES

DEFAULT_OUT = "docs/results"
DEFAULT_RUNS = "runs/results"


def parse_seeds(text: str) -> List[int]:
    """"0-4" -> [0, 1, 2, 3, 4]; "0,3,7" and "0-2,8" also. ValueError naming the part it cannot read."""
    seeds: List[int] = []
    for part in text.split(","):
        low, _, high = part.strip().partition("-")
        try:
            seeds.extend(range(int(low), int(high or low) + 1))
        except ValueError:
            raise ValueError(f"--seeds: cannot read {part!r}; write 0-4, 3 or 0,2,5") from None
    if not seeds or len(set(seeds)) != len(seeds):
        raise ValueError(f"--seeds {text!r} names no seed, or one twice")
    return seeds


def make_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.results_runner", description=__doc__.splitlines()[0])
    parser.add_argument("--suite", required=True, choices=sorted(SUITES), help="the suite (suites.py)")
    parser.add_argument("--agents", nargs="+", metavar="AGENT", help="only these of the suite's agents")
    parser.add_argument("--tasks", nargs="+", metavar="TASK", help="only these of the suite's tasks")
    parser.add_argument("--seeds", help="seeds, e.g. 0-4 (default: the suite's)")
    parser.add_argument("--out", default=DEFAULT_OUT,
                        help=f"where the page, PNGs and cell records go (default {DEFAULT_OUT})")
    parser.add_argument("--runs", default=DEFAULT_RUNS,
                        help=f"where the cells' run directories and logs go (default {DEFAULT_RUNS})")
    parser.add_argument("--jobs", type=int, default=1, help="cells trained at once (default 1)")
    parser.add_argument("--list", action="store_true", help="list the cells (done, failed, to run) and exit")
    parser.add_argument("--report-only", action="store_true", help="write the page from the stored cells only")
    parser.add_argument("--record-finished", action="store_true",
                        help="record groups whose run directory already holds a finished run of their seeds "
                             "(trained on another machine and copied into --runs) instead of training them again")
    parser.add_argument("--evaluate-missing", action="store_true",
                        help="first evaluate the final policy of finished cells stored without it (their run "
                             "directories must still exist), then go on as asked")
    return parser


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = make_parser()
    args = parser.parse_args(argv)
    suite = SUITES[args.suite]
    agents = _choose(parser, "--agents", args.agents, suite.agents)
    tasks = _choose(parser, "--tasks", args.tasks, [task.name for task in suite.tasks])
    try:
        seeds = parse_seeds(args.seeds) if args.seeds else list(suite.seeds)
    except ValueError as error:
        parser.error(str(error))
    if args.jobs < 1:
        parser.error(f"--jobs must be >= 1, got {args.jobs}")
    out, runs = os.path.abspath(args.out), os.path.abspath(args.runs)
    todo, done = groups(suite, agents, tasks, seeds, out)
    cells = sum(len(group.seeds) for group in todo)
    prefix = f"[results {suite.name}]"
    if args.list:
        for agent, task, seed in done:
            print(f"{prefix} done     {agent} {task} seed {seed}")
        for group in todo:
            for seed in group.seeds:
                failed = os.path.exists(cell_path(out, suite.name, group.agent, group.task.name, seed, error=True))
                print(f"{prefix} {'failed ' if failed else 'to run '}  {group.agent} {group.task.name} seed {seed}")
        return 0
    print(f"{prefix} {len(done)} cells finished (kept), {cells} to run in {len(todo)} processes; records in "
          f"{shown(out)}/{suite.name}/cells, runs in {shown(runs)}/{suite.name}", flush=True)
    if args.evaluate_missing:
        if not suite.evaluates_final_policy:
            parser.error(f"--evaluate-missing: the {suite.name} suite evaluates no final policy")
        for line in add_missing_evaluations(suite, done, out):
            print(f"{prefix} {line}", flush=True)
    failures = 0
    if not args.report_only and todo:
        failures = _run(todo, out, runs, args.jobs, prefix, args.record_finished)
    for path in write_report(suite, out):
        print(f"{prefix} wrote {shown(path)}", flush=True)
    return 1 if failures else 0


def _choose(parser, flag: str, chosen: Optional[Sequence[str]], choices: Sequence[str]) -> List[str]:
    if chosen is None:
        return list(choices)
    unknown = [name for name in chosen if name not in choices]
    if unknown:
        parser.error(f"{flag}: {', '.join(unknown)} not in this suite; choose from: {', '.join(choices)}")
    return list(chosen)


def _run(todo, out: str, runs: str, jobs: int, prefix: str, record_finished: bool = False) -> int:
    """Trains the groups (`jobs` at a time), printing a line as each starts and ends; returns the failed cells."""
    failures, start = 0, time.time()

    def one(index, group):
        seeds = ",".join(map(str, group.seeds))
        print(f"{prefix} {index}/{len(todo)} {group.agent} {group.task.name} seed{'s' * (len(group.seeds) > 1)} "
              f"{seeds}: training {group.task.steps} steps ({group.launch}); log "
              f"{shown(group.run_dir(runs))}.log", flush=True)
        records = run_group(group, out, runs, jobs, record_finished)
        if not records:
            print(f"{prefix} {index}/{len(todo)} {group.agent} {group.task.name}: stopped part way, checkpoint kept in "
                  f"{shown(group.run_dir(runs))}: the next invocation resumes it", flush=True)
            return 0
        first = next(iter(records.values()))
        print(f"{prefix} {index}/{len(todo)} {group.agent} {group.task.name}: {describe(records)} "
              f"({first['wall_seconds']:.0f} s wall, {first['cpu_seconds'] or 0:.0f} s CPU; "
              f"{time.time() - start:.0f} s since the start)", flush=True)
        return sum("error" in record for record in records.values())

    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        for failed in pool.map(lambda item: one(*item), enumerate(todo, start=1)):
            failures += failed
    return failures


if __name__ == "__main__":
    sys.exit(main())
