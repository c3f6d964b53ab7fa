"""What every benchmark records beside its figures: the machine, the versions, and where results go.

Also the shared measuring helpers: interleaved timing of "ours" against a baseline in the same process, the
JAX compile-time meter, and the result row every benchmark contributes to `results/summary.md`:

    {"benchmark", "ours", "baseline", "unit", "ratio", "goal", "met"}

`ratio` is ours / baseline. For rates the goal reads `ratio >= goal`; for times (`lower_is_better`) it
reads `ratio <= goal`. This module imports only the standard library and `acmelike.files` (standard library
only), so the SBX runner (another venv) can use it too.
"""

import datetime
import os
import platform
import statistics
import time
from typing import Any, Callable, Dict, List, Optional

from acmelike import files

RESULTS_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results")


def machine_info() -> Dict[str, Any]:
    """The machine, including what identifies its CPU beyond the marketing name: XLA compiles for the host's
    instruction set, so float results (and a seeded run's whole course) can differ between CPU generations that
    share a name ("AMD EPYC")."""
    cpu, fields = platform.processor() or "unknown", {}
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                key, _, value = line.partition(":")
                fields.setdefault(key.strip(), value.strip())
    except OSError:
        pass
    flags = set(fields.get("flags", "").split())
    vector_isa = next((isa for isa in ("avx512f", "avx2", "avx", "sse4_2") if isa in flags), None)
    info = {
        "cpu_model": fields.get("model name", cpu),
        "cores": os.cpu_count(),
        "python": platform.python_version(),
        "platform": platform.platform(),
    }
    if "cpu family" in fields:
        info["cpu_id"] = f"family {fields['cpu family']} model {fields.get('model', '?')}"
    if vector_isa:
        info["vector_isa"] = vector_isa
    return info


def package_versions(names: List[str]) -> Dict[str, str]:
    from importlib import metadata

    versions = {}
    for name in names:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    return versions


FULL_STACK_PACKAGES = ["jax", "jaxlib", "flax", "optax", "rlax", "numpy", "gymnasium", "dm-reverb", "tensorflow-cpu"]


def median_rate(run: Callable[[], int], repeats: int) -> Dict[str, Any]:
    """Calls `run` (which returns a count of work done) `repeats` times; returns the median rate per second."""
    rates = []
    for _ in range(repeats):
        start = time.perf_counter()
        count = run()
        rates.append(count / (time.perf_counter() - start))
    rates.sort()
    return {"median_per_second": rates[len(rates) // 2], "all_per_second": rates}


def paired_rates(ours: Callable[[], int], baseline: Callable[[], int], repeats: int) -> Dict[str, Any]:
    """Runs baseline and ours alternately `repeats` times each (order swapped every round, so drift in machine
    load hits both alike); each callable returns a count of work done.

    Returns median wall-clock rates per side, the median of the per-round ratios ours/baseline (the figure to
    read: robust to a busy machine), and the same from process CPU time (what the process itself spent,
    threads included).
    """
    wall = {"ours": [], "baseline": []}
    cpu = {"ours": [], "baseline": []}
    for i in range(repeats):
        order = (("baseline", baseline), ("ours", ours)) if i % 2 == 0 else (("ours", ours), ("baseline", baseline))
        for side, run in order:
            start_wall, start_cpu = time.perf_counter(), time.process_time()
            count = run()
            wall[side].append(count / (time.perf_counter() - start_wall))
            cpu[side].append(count / max(time.process_time() - start_cpu, 1e-9))
    return {
        "ours_per_second": statistics.median(wall["ours"]),
        "baseline_per_second": statistics.median(wall["baseline"]),
        "ratio": statistics.median(o / b for o, b in zip(wall["ours"], wall["baseline"])),
        "ratio_cpu_time": statistics.median(o / b for o, b in zip(cpu["ours"], cpu["baseline"])),
        "ours_all_per_second": [round(r, 1) for r in wall["ours"]],
        "baseline_all_per_second": [round(r, 1) for r in wall["baseline"]],
        "repeats": repeats,
    }


class CompileMeter:
    """Sums the seconds JAX spends tracing, lowering and compiling (its own monitoring events) while installed,
    and apart, `backend_seconds`, those in XLA's compiles alone (events never nested, unlike tracing's).

    One listener per process (JAX keeps listeners for good); `reset()` starts a new count.
    """

    EVENTS = (
        "/jax/core/compile/jaxpr_trace_duration",
        "/jax/core/compile/jaxpr_to_mlir_module_duration",
        "/jax/core/compile/backend_compile_duration",
    )
    _installed: Optional["CompileMeter"] = None

    def __init__(self):
        self.reset()

    @classmethod
    def install(cls) -> "CompileMeter":
        if cls._installed is None:
            import jax

            meter = cls()

            def listener(event, duration, **_):
                if event in cls.EVENTS:
                    meter.seconds += duration
                    if event.endswith("backend_compile_duration"):
                        meter.count += 1
                        meter.backend_seconds += duration

            jax.monitoring.register_event_duration_secs_listener(listener)
            cls._installed = meter
        return cls._installed

    def reset(self) -> None:
        self.seconds, self.count, self.backend_seconds = 0.0, 0, 0.0


def result_row(
    benchmark: str,
    ours: Optional[float],
    baseline: Optional[float],
    unit: str,
    goal: Optional[float],
    *,
    ratio: Optional[float] = None,
    lower_is_better: bool = False,
    ours_label: str = "",
    baseline_label: str = "",
    note: str = "",
) -> Dict[str, Any]:
    """One row of the summary table. `ratio` defaults to ours / baseline; the goal is `ratio >= goal`, or
    `ratio <= goal` when `lower_is_better`. A missing figure (None) gives ratio and met None."""
    if ratio is None and ours is not None and baseline:
        ratio = ours / baseline
    met = None
    if ratio is not None and goal is not None:
        met = bool(ratio <= goal) if lower_is_better else bool(ratio >= goal)
    return {
        "benchmark": benchmark,
        "ours": ours,
        "baseline": baseline,
        "unit": unit,
        "ratio": None if ratio is None else round(ratio, 3),
        "goal": None if goal is None else (f"<= {goal}" if lower_is_better else f">= {goal}"),
        "met": met,
        "lower_is_better": lower_is_better,
        "ours_label": ours_label,
        "baseline_label": baseline_label,
        "note": note,
    }


def header(name: str, *, quick: bool, seeds: List[int], packages: List[str] = FULL_STACK_PACKAGES) -> Dict[str, Any]:
    """The fields every result file starts with. `load_average` lets a reader see whether the machine was busy."""
    return {
        "benchmark": name,
        "mode": "quick" if quick else "full",
        "started_at": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "machine": machine_info(),
        "versions": package_versions(packages),
        "seeds": seeds,
        "load_average_at_start": [round(x, 2) for x in os.getloadavg()],
    }


def finish(payload: Dict[str, Any]) -> Dict[str, Any]:
    payload["load_average_at_end"] = [round(x, 2) for x in os.getloadavg()]
    return payload


def write_json(name: str, payload: Dict[str, Any], results_dir: str = RESULTS_DIR) -> str:
    os.makedirs(results_dir, exist_ok=True)
    path = os.path.join(results_dir, f"{name}.json")
    files.write_json(path, payload)
    return path


def print_rows(rows: List[Dict[str, Any]]) -> None:
    for row in rows:
        ratio = "-" if row["ratio"] is None else f"{row['ratio']:.3f}"
        met = {True: "met", False: "MISSED", None: "-"}[row["met"]]
        ours = "-" if row["ours"] is None else f"{row['ours']:.6g}"
        baseline = "-" if row["baseline"] is None else f"{row['baseline']:.6g}"
        print(
            f"  {row['benchmark']}: ours {ours} vs {baseline} {row['unit']} -> ratio {ratio} "
            f"(goal {row['goal']}: {met})"
        )


def run_seed_pair(name: str, description: str, make_loops: Callable[[int], tuple], *, packages: List[str],
                  config: Dict[str, Any], benchmark: str, unit: str, ours_label: str, baseline_label: str,
                  note: str, argv: Optional[List[str]] = None) -> Dict[str, Any]:
    """The main of a benchmark that times ours against a baseline, both vmapped over seeds (5; --quick 2, with 3
    paired repeats instead of 5): `make_loops(num_seeds) -> (ours, baseline)` callables that return the work
    they did. Prints the row, writes `<out>/<name>.json` and returns its payload. `note` may use {num_seeds}."""
    import argparse

    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--out", default=RESULTS_DIR)
    args = parser.parse_args(argv)
    num_seeds, repeats = (2, 3) if args.quick else (5, 5)
    payload = header(name, quick=args.quick, seeds=list(range(num_seeds)), packages=packages)
    ours, baseline = make_loops(num_seeds)
    rates = paired_rates(ours, baseline, repeats)
    payload["config"] = {"num_seeds": num_seeds, **config}
    payload["rates"] = rates
    payload["rows"] = [result_row(
        benchmark, rates["ours_per_second"], rates["baseline_per_second"], unit, None, ratio=rates["ratio"],
        ours_label=ours_label, baseline_label=baseline_label, note=note.format(num_seeds=num_seeds),
    )]
    print_rows(payload["rows"])
    print(f"wrote {write_json(name, finish(payload), args.out)}")
    return payload

