"""What every benchmark records beside its figures: the machine, the versions, and where results go."""

import json
import os
import platform
import time
from typing import Any, Callable, Dict, List

RESULTS_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results")


def machine_info() -> Dict[str, Any]:
    cpu = platform.processor() or "unknown"
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    return {"cpu_model": cpu, "cores": os.cpu_count(), "python": platform.python_version(), "platform": platform.platform()}


def package_versions(names: List[str]) -> Dict[str, str]:
    from importlib import metadata

    versions = {}
    for name in names:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    return versions


def median_rate(run: Callable[[], int], repeats: int) -> Dict[str, Any]:
    """Calls `run` (which returns a count of work done) `repeats` times; returns the median rate per second."""
    rates = []
    for _ in range(repeats):
        start = time.perf_counter()
        count = run()
        rates.append(count / (time.perf_counter() - start))
    rates.sort()
    return {"median_per_second": rates[len(rates) // 2], "all_per_second": rates}


def write_json(name: str, payload: Dict[str, Any], results_dir: str = RESULTS_DIR) -> str:
    os.makedirs(results_dir, exist_ok=True)
    path = os.path.join(results_dir, f"{name}.json")
    with open(path, "w") as f:
        json.dump(payload, f, indent=2)
    return path
