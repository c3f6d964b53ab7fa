"""A suite's page, from every cell stored for it: `<out>/<suite>.md` and a PNG per task.

The page opens with a compact table that fits a 1,400 px window (`SUMMARY_COLUMNS`; tests/docs/test_results_pages.py
checks its width): one row per (agent, task) with our return (greedy where measured, else final), the interquartile
mean with a stratified-bootstrap 95% interval where there are at least `MIN_SEEDS_FOR_IQM` seeds (rliable; a numpy
bootstrap where rliable cannot be imported, said on the page), the published references and the verdict: below the
reference's mean minus one standard deviation is a finding to investigate (issue 22). Findings and the curves come
next; then the detail: the full table (budget, seeds, final, best and greedy returns, ours at each reference's
step count, the verdict in words), the references' sources, the suite's notes, the presets and one line per cell.
"""

import glob
import json
import os
import warnings
from typing import Any, Dict, List, NamedTuple, Optional, Sequence, Tuple

import numpy as np

from acmelike import files
from benchmarks.results_runner.cells import REPO, cell_path
from benchmarks.results_runner.suites import Reference, Suite

MIN_SEEDS_FOR_IQM = 5
BOOTSTRAP_REPS = 10_000
SUMMARY_COLUMNS = ("agent", "task", "return (mean ± std)", "IQM [95% CI]", "reference", "verdict")
# Material's theme keeps the table of contents beside a page: a results page hides it, for the tables' width.
FRONT_MATTER = ["---", "hide:", "  - toc", "---", ""]


class Interval(NamedTuple):
    """An interquartile mean and its 95% bootstrap interval; `method` says what computed them."""

    iqm: float
    low: float
    high: float
    method: str


def iqm_interval(scores: Sequence[float], reps: int = BOOTSTRAP_REPS, seed: int = 0) -> Interval:
    """The interquartile mean (the 25% trimmed mean) of per-seed `scores`, with a percentile bootstrap 95%
    interval over seeds (rliable's `get_interval_estimates`, seeded). Where rliable does not import, the same
    bootstrap in numpy, and `method` says why."""
    scores = np.sort(np.asarray(scores, np.float64))  # the seeded resamples then do not hang on the cells' order
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            from rliable import library, metrics
    except Exception as error:  # noqa: BLE001 - absent, or its arch dependency fails to import (pandas 3)
        rng = np.random.default_rng(seed)
        samples = scores[rng.integers(0, len(scores), size=(reps, len(scores)))]
        low, high = np.percentile(_trimmed_mean(samples), [2.5, 97.5])
        return Interval(float(_trimmed_mean(scores[None])[0]), float(low), float(high),
                        f"numpy bootstrap (rliable unavailable: {type(error).__name__}: {error})")
    # rliable 1.2's StratifiedBootstrap draws its resamples from numpy's global generator (`np.random.choice` in
    # `update_indices`), not from the `random_state` it is given, so that alone left the interval to whatever the
    # global state was: a page's intervals changed from one `--report-only` to the next. The global generator is
    # seeded for the call and put back after it.
    global_state = np.random.get_state()
    np.random.seed(seed)
    try:
        with warnings.catch_warnings():  # arch (under rliable) deprecates the RandomState that rliable passes it
            warnings.simplefilter("ignore", FutureWarning)
            point, interval = library.get_interval_estimates(
                {"scores": scores.reshape(-1, 1)}, lambda x: np.array([metrics.aggregate_iqm(x)]), reps=reps,
                random_state=np.random.RandomState(seed),
            )
    finally:
        np.random.set_state(global_state)
    return Interval(float(point["scores"][0]), float(interval["scores"][0, 0]), float(interval["scores"][1, 0]),
                    "rliable")


def _trimmed_mean(samples: np.ndarray) -> np.ndarray:
    """Each row's mean after cutting int(0.25 n) values from each end (scipy's trim_mean, as rliable uses)."""
    n = samples.shape[1]
    cut = int(0.25 * n)
    return np.sort(samples, axis=1)[:, cut:n - cut].mean(axis=1)


def load_cells(suite: Suite, out: str) -> Tuple[Dict[Tuple[str, str], List[dict]], List[dict]]:
    """((agent, task) -> finished records sorted by seed, the failed records of cells not finished since)."""
    finished: Dict[Tuple[str, str], List[dict]] = {}
    failed = []
    for agent, tasks in suite.cells.items():
        for task in tasks:
            directory = os.path.dirname(cell_path(out, suite.name, agent, task, 0))
            records = []
            for path in sorted(glob.glob(os.path.join(directory, "seed_*.json"))):
                with open(path) as f:
                    record = json.load(f)
                (failed if path.endswith(".error.json") else records).append(record)
            if records:
                finished[(agent, task)] = sorted(records, key=lambda record: record["seed"])
    return finished, failed


def write_report(suite: Suite, out: str) -> List[str]:
    """Writes `<out>/<suite>.md` and `<out>/<suite>/<task>.png` from the stored cells; returns the paths."""
    finished, failed = load_cells(suite, out)
    os.makedirs(os.path.join(out, suite.name), exist_ok=True)
    plots = {}
    for task in suite.tasks:
        path = os.path.join(out, suite.name, f"{task.name}.png")
        if plot_task(suite, task.name, finished, path):
            plots[task.name] = path
    page = os.path.join(out, f"{suite.name}.md")
    files.write_text(page, markdown(suite, finished, failed, plots))  # the old page stays until the new one is whole
    return [page, *plots.values()]


def _iqm_text(records, methods: set) -> str:
    """The interquartile mean of the cells' final returns with its 95% interval, or "—" below MIN_SEEDS_FOR_IQM
    seeds; adds the interval's method to `methods` (the page names each one used)."""
    if len(records) < MIN_SEEDS_FOR_IQM:
        return "—"
    interval = iqm_interval([record["final_average_return"] for record in records])
    methods.add(interval.method)
    return f"{_number(interval.iqm)} [{_number(interval.low)}, {_number(interval.high)}]"


def _mean_std(values: Sequence[Optional[float]]) -> Optional[Tuple[float, float, int]]:
    values = [value for value in values if value is not None]
    if not values:
        return None
    return float(np.mean(values)), float(np.std(values)), len(values)


def _number(value: float) -> str:
    return f"{value:.1f}"


def _steps(steps: Optional[int]) -> str:
    if steps is None:
        return "steps not given"
    if steps % 1_000_000 == 0:
        return f"{steps // 1_000_000}M"
    return f"{steps // 1000}k" if steps % 1000 == 0 else str(steps)


def _reference_text(ref: Reference) -> str:
    spread = f" ± {_number(ref.std)}" if ref.std is not None else ""
    return f"{_number(ref.mean)}{spread} at {_steps(ref.steps)} [{ref.source.key}]"


def greedy_returns(records: Sequence[dict]) -> Optional[List[float]]:
    """Each record's final-policy return without exploration, or None unless every record has one."""
    values = [record.get("greedy", {}).get("mean_return") for record in records]
    return values if records and all(value is not None for value in values) else None


def verdict(ref: Reference, records: Sequence[dict], budget: int) -> Tuple[str, Optional[str]]:
    """(ours at the reference's step count as text, the verdict) for one reference. The verdict is "below" (a
    finding: under the published mean minus one std at the same step count), "within", "above", or why no
    comparison is made.

    Like is compared with like: against a source of evaluation returns (`Source.evaluation`) at our budget (or at
    no given step count), ours are the final policies' returns without exploration where every cell has them
    (marked "greedy"); otherwise the training average at the reference's step count."""
    if not records:
        return "—", "no cells yet"
    greedy = greedy_returns(records) if ref.source.evaluation and ref.steps in (None, budget) else None
    if ref.steps is None:
        ours = _mean_std(greedy or [record["final_average_return"] for record in records])
        floor, what = ref.mean - (ref.std or 0.0), "the published mean" if ref.std is None else "mean − 1 std"
        label = "below" if ours[0] < floor else "at or above"
        return (f"{_number(ours[0])} ± {_number(ours[1])} ({'greedy' if greedy else 'final'})",
                f"{label} {what} (no step count published)")
    if ref.steps > budget:
        return "—", f"no comparison: our budget ({_steps(budget)}) is below the reference's ({_steps(ref.steps)})"
    if greedy:
        ours = _mean_std(greedy)
    else:
        ours = _mean_std([record.get("average_return_at_steps", {}).get(str(ref.steps)) for record in records])
    if ours is None:
        return "—", "no episode ended by the reference's step count"
    std = ref.std or 0.0
    label = "below" if ours[0] < ref.mean - std else "above" if ours[0] > ref.mean + std else "within 1 std"
    return f"{_number(ours[0])} ± {_number(ours[1])}{' (greedy)' if greedy else ''}", label


def markdown(suite: Suite, finished: Dict[Tuple[str, str], List[dict]], failed: List[dict],
             plots: Dict[str, str]) -> str:
    lines = [*FRONT_MATTER, f"# Results: {suite.name}", "", suite.description, ""]
    lines += _summary(suite, finished)
    lines += _findings(suite, finished)
    lines += _twins(suite, finished)
    if plots:
        lines += ["## Curves", "", "The average of the last `return_window` training-episode returns against "
                  "environment steps, up to our budget: each agent's mean over seeds with a ±1 std band; a diamond, "
                  "its final policies' return without exploration (± std over seeds); a star marks a published "
                  "reference at its step count (its bar: ± its std), a dashed line one without a step count, and a "
                  "triangle on the right edge one measured beyond our budget (the legend gives its step count).", ""]
        for task, path in plots.items():
            lines += [f"![{task}]({suite.name}/{os.path.basename(path)})", ""]
    lines += ["## Detail", "",
              f"Written by `python -m benchmarks.results_runner --suite {suite.name}` from the cell records in "
              f"`{suite.name}/cells/` beside this page: do not edit it by hand. Rerun or extend it with:", "",
              "```bash",
              f"make results SUITE={suite.name}          # every missing cell, then this page",
              f".venv/bin/python -m benchmarks.results_runner --suite {suite.name} --agents {suite.agents[0]} "
              f"--tasks {suite.cells[suite.agents[0]][0]} --seeds {_seed_text(suite.seeds)}",
              "```", ""]
    if suite.extras:
        lines += [f"Needs the extra{'s' if len(suite.extras) > 1 else ''} "
                  f"{', '.join(f'`{extra}`' for extra in suite.extras)}: "
                  f"`pip install -c constraints.txt -e '.[{','.join(suite.extras)}]'`.", ""]
    lines += _table(suite, finished)
    lines += _sources(suite)
    if suite.notes:
        lines += ["## Notes", ""] + [f"- {note}" for note in suite.notes] + [""]
    lines += _presets(suite)
    lines += _cells(suite, finished, failed)
    return "\n".join(lines).rstrip() + "\n"


def _summary(suite: Suite, finished) -> List[str]:
    """The compact table: one row per (agent, task), the columns of `SUMMARY_COLUMNS`."""
    several_sources = len(suite.sources()) > 1
    lines = [
        "## Returns", "",
        "Return: the final policies' average return without exploration (greedy) where every seed has it, else the "
        "average of the last `return_window` training episodes at the end of the budget (final); mean ± std over "
        "seeds. IQM: the interquartile mean of the final returns over seeds, with a 95% bootstrap interval. "
        "Verdict: ours against the reference's mean ± 1 std at its step count (the ours it names where that is "
        "not the return beside it); **below** is a finding. The full table, sources and per-seed cells are under "
        "[Detail](#detail).", "",
        "| " + " | ".join(SUMMARY_COLUMNS) + " |",
        "|" + "---|" * len(SUMMARY_COLUMNS),
    ]
    methods = set()
    for agent, tasks in suite.cells.items():
        for task_name in tasks:
            task = suite.task(task_name)
            records = finished.get((agent, task_name), [])
            greedy = greedy_returns(records)
            shown = _mean_std(greedy or [record["final_average_return"] for record in records])
            returned = "—" if shown is None else f"{_pair(shown)} ({'greedy' if greedy else 'final'})"
            if records and len(records) < len(suite.seeds):  # on a line of its own: the table stays narrow
                returned += f"<br>{len(records)} of {len(suite.seeds)} seeds"
            iqm = _iqm_text(records, methods)
            references = suite.references_for(agent, task_name)
            texts, verdicts = [], []
            for ref in references:
                text = _reference_text(ref)
                texts.append(text if several_sources else text.split(" [")[0])
                ours, label = verdict(ref, records, task.steps)
                verdicts.append(_short_verdict(ref, ours, label, shown))
            lines.append(f"| {agent} | {task_name} ({_steps(task.steps)}) | {returned} | {iqm} | "
                         f"{'<br>'.join(texts) or 'none published'} | {'<br>'.join(verdicts) or '—'} |")
    lines.append("")
    for method in sorted(methods - {"rliable"}):
        lines += [f"IQM intervals on this page come from a {method}.", ""]
    if not several_sources and suite.references:
        lines += [f"References: {suite.sources()[0].key} (under [References](#references)).", ""]
    return lines


def _short_verdict(ref: Reference, ours: str, label: Optional[str], shown) -> str:
    """`verdict`'s label in a few words, with the ours it was reached on where that is not the return shown."""
    if label.startswith("no comparison"):
        return f"not compared: reference at {_steps(ref.steps)}"
    if label.startswith("no "):
        return label
    word = "**below**" if label.startswith("below") else label.split(" (")[0].replace(" the published mean", "")
    value = ours.split(" (")[0]
    if shown is not None and value != _pair(shown) and ref.steps is not None:
        return f"{word}: {value} at {_steps(ref.steps)}"
    return word


def _seed_text(seeds: Sequence[int]) -> str:
    seeds = sorted(seeds)
    contiguous = seeds == list(range(seeds[0], seeds[-1] + 1))
    return f"{seeds[0]}-{seeds[-1]}" if contiguous and len(seeds) > 1 else ",".join(map(str, seeds))


def _table(suite: Suite, finished) -> List[str]:
    if suite.evaluates_final_policy:
        greedy_text = (f"Greedy: the final policy's average return over {suite.eval_episodes} episodes without "
                       f"exploration (`python -m launch.cli.evaluate RUN --episodes {suite.eval_episodes} --seed "
                       f"100`), mean ± std over seeds.")
    else:
        greedy_text = "Greedy: not measured in this suite."
    lines = [
        "### Every column", "",
        f"Final: the average of the last `return_window` training episodes at the end of the budget; best: the "
        f"highest such average during the run. IQM: interquartile mean over seeds with a 95% stratified-bootstrap "
        f"interval ({BOOTSTRAP_REPS} resamples), where there are at least {MIN_SEEDS_FOR_IQM} seeds. {greedy_text} "
        f"Verdict: ours at "
        f"the reference's step count against the published mean ± 1 std (greedy where the reference evaluates "
        f"its policy without exploration at our budget, marked so; else the training average); **below** is a "
        f"finding.", "",
        "| agent | task | budget | seeds | final (mean ± std) | best (mean ± std) | greedy (mean ± std) "
        "| IQM [95% CI] | reference | ours at the reference's steps | verdict |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    methods = set()
    for agent, tasks in suite.cells.items():
        for task_name in tasks:
            task = suite.task(task_name)
            records = finished.get((agent, task_name), [])
            final = _mean_std([record["final_average_return"] for record in records])
            best = _mean_std([record["best_average_return"] for record in records])
            greedy = _mean_std([record.get("greedy", {}).get("mean_return") for record in records])
            if greedy is not None and greedy[2] < len(records):  # some cells not evaluated: say how many are
                greedy_text = f"{_pair(greedy)} ({greedy[2]} of {len(records)})"
            else:
                greedy_text = _pair(greedy)
            iqm = _iqm_text(records, methods)
            references = suite.references_for(agent, task_name)
            compared = [verdict(ref, records, task.steps) for ref in references]
            verdicts = [f"**{label}**" if label == "below" else label for _, label in compared]
            lines.append(
                f"| {agent} | {task_name} | {_steps(task.steps)} | {len(records)} of {len(suite.seeds)} | "
                f"{_pair(final)} | {_pair(best)} | {greedy_text} | {iqm} | "
                f"{'<br>'.join(_reference_text(ref) for ref in references) or 'none published'} | "
                f"{'<br>'.join(ours for ours, _ in compared) or '—'} | {'<br>'.join(verdicts) or '—'} |"
            )
    lines.append("")
    for method in sorted(methods - {"rliable"}):
        lines += [f"IQM intervals on this page come from a {method}.", ""]
    return lines


def _pair(stats) -> str:
    """`mean ± std` of `_mean_std`'s (mean, std, n); the mean alone for one value, which has no spread."""
    if stats is None:
        return "—"
    return _number(stats[0]) if stats[2] == 1 else f"{_number(stats[0])} ± {_number(stats[1])}"


def _findings(suite: Suite, finished) -> List[str]:
    rows = []
    for agent, tasks in suite.cells.items():
        for task_name in tasks:
            records = finished.get((agent, task_name), [])
            for ref in suite.references_for(agent, task_name):
                ours, label = verdict(ref, records, suite.task(task_name).steps)
                if label == "below":
                    rows.append(f"- {agent} on {task_name}: ours {ours} at {_steps(ref.steps)} steps, published "
                                f"{_reference_text(ref)}.")
    if not rows:
        return []
    return ["## Findings", "", "Cells below the published mean minus one standard deviation at the same step "
            "count. Each is to be investigated (a bug, a hyperparameter difference to record in the preset, or a "
            "budget difference) and the cause said in the agent's README and here.", "", *rows, ""]


def twin_agreement(single: Sequence[float], anakin: Sequence[float]) -> Tuple[float, str]:
    """(anakin's mean minus single's, the verdict) for one agent's final returns in its two forms: "agree" when
    the means differ by at most the larger of the two standard deviations over seeds, else "**disagree**" (a
    finding)."""
    difference = float(np.mean(anakin) - np.mean(single))
    spread = max(float(np.std(single)), float(np.std(anakin)))
    return difference, "agree" if abs(difference) <= spread else "**disagree**"


def _twins(suite: Suite, finished) -> List[str]:
    """Each `<agent>@anakin` row beside its single-process twin `<agent>` on the same task, where both have cells."""
    rows = []
    for row, tasks in suite.cells.items():
        twin = suite.agent_of(row)
        if suite.launch_of(row) != "anakin" or twin == row or twin not in suite.cells:
            continue
        for task_name in tasks:
            single, anakin = finished.get((twin, task_name), []), finished.get((row, task_name), [])
            if not single or not anakin:
                continue
            finals = [[record["final_average_return"] for record in records] for records in (single, anakin)]
            difference, label = twin_agreement(*finals)
            rows.append(f"| {twin} | {task_name} | {_pair(_mean_std(finals[0]))} ({len(single)}) | "
                        f"{_pair(_mean_std(finals[1]))} ({len(anakin)}) | {difference:+.1f} | {label} |")
    if not rows:
        return []
    return ["## Fully jitted beside one process", "",
            "Each agent's final training return (the last `return_window` episodes at the budget; mean ± std over "
            "the seeds in brackets) in one process and fully jitted (`<agent>@anakin`, its seeds in one vmapped "
            "call). The forms agree when their means differ by at most the larger of the two standard deviations; "
            "**disagree** is a finding.", "",
            "| agent | task | one process | fully jitted | difference | verdict |", "|---|---|---|---|---|---|",
            *rows, ""]


def _sources(suite: Suite) -> List[str]:
    if not suite.references:
        return []
    lines = ["## References", ""]
    for source in suite.sources():
        environments = sorted({ref.environment for ref in suite.references if ref.source.key == source.key})
        lines.append(f"- [{source.key}] {source.text} Environments: {'; '.join(environments)}.")
    return lines + [""]


def _presets(suite: Suite) -> List[str]:
    from launch.experiments.presets import load_preset  # reads launch/presets/<name>.json

    lines = []
    for name in dict.fromkeys(suite.preset_of(task.name) for task in suite.tasks if suite.preset_of(task.name)):
        tasks = [task.name for task in suite.tasks if suite.preset_of(task.name) == name]
        preset = load_preset(name)
        which = "Every cell runs" if len(tasks) == len(suite.tasks) else f"The cells on {', '.join(tasks)} run"
        lines += [f"{which} with `--preset {name}` (`launch/presets/{name}.json`; `python -m launch --agent NAME "
                  f"--list-config` lists the fields). Its notes:", ""]
        agents = dict.fromkeys(suite.agent_of(row) for row in suite.agents if set(suite.cells[row]) & set(tasks))
        for agent in agents:
            entry = preset.agents.get(agent)
            if entry is not None:
                lines.append(f"- {agent}: {entry.notes or 'the agent defaults.'}")
        lines.append("")
    if not lines:
        return []
    lines = ["## Hyperparameters", "", *lines[:-1]]
    extra = {agent: overrides for agent, overrides in suite.config.items() if overrides}
    for agent, overrides in extra.items():
        lines.append(f"- {agent}, in this suite only: {' '.join(f'`--config {o}`' for o in overrides)}")
    return lines + [""]


def _cells(suite: Suite, finished, failed: List[dict]) -> List[str]:
    records = [record for key in sorted(finished) for record in finished[key]]
    if not records and not failed:
        return ["## Cells", "", "No cell has run yet.", ""]
    lines = ["## Cells", "", "One line per finished cell (its record: `" + suite.name + "/cells/<agent>/<task>/"
             "seed_<n>.json`, with the curve, the command, package versions and the machine).", "",
             "| agent | task | seed | final | best | greedy | env steps | wall s | CPU s | commit |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for record in records:
        commit = (record.get("commit") or "?")[:10] + (" (modified)" if record.get("dirty") else "")
        shared = f" ({len(record['seeds_in_process'])} seeds in one process)" if len(
            record.get("seeds_in_process", [])) > 1 else ""
        lines.append(f"| {record['agent']} | {record['task']} | {record['seed']} | "
                     f"{_number(record['final_average_return'])} | {_number(record['best_average_return'])} | "
                     f"{_greedy_cell(record)} | {record['env_steps']} | {record['wall_seconds']:.0f}{shared} | "
                     f"{'-' if record['cpu_seconds'] is None else format(record['cpu_seconds'], '.0f')} | "
                     f"{commit} |")
    lines.append("")
    # A record made from a run trained elsewhere (--record-finished) names that run's device, not a machine.
    machines = sorted({_machine(r["machine"]) if r.get("machine") else f"{r.get('device')} (trained "
                       f"elsewhere, recorded from its run directory)" for r in records})
    packages = sorted({", ".join(f"{name} {version}" for name, version in sorted(r["packages"].items()))
                       for r in records if r.get("packages")})
    if machines:
        lines += [f"Machines: {'; '.join(machines)}.", "", f"Packages: {' | '.join(packages)}.", ""]
    if failed:
        lines += ["Failed cells (they run again next time):", ""]
        for record in failed:
            last = (record.get("log_tail") or [""])[-1]
            lines.append(f"- {record['agent']} {record['task']} seed {record['seed']}: {record['error']} "
                         f"(`{record.get('log')}`: {last.strip()[:200]})")
        lines.append("")
    return lines


def _machine(machine: dict) -> str:
    """A record's machine in words; the CPU's family, model and vector instructions where the record has them
    (older records name only the model name and the kernel's platform string)."""
    cpu = machine.get("cpu_model")
    if machine.get("cpu_id"):
        cpu += f" ({machine['cpu_id']}, {machine.get('vector_isa', '?')})"
    else:
        cpu += f" (platform {machine.get('platform', '?')})"
    return f"{cpu}, {machine.get('cores')} cores, Python {machine.get('python')}"


def _greedy_cell(record: dict) -> str:
    if "greedy" in record:
        return _number(record["greedy"]["mean_return"])
    return "failed" if "greedy_error" in record else "—"


def plot_task(suite: Suite, task_name: str, finished, path: str) -> bool:
    """Draws each agent's mean curve (±1 std band) on `task_name`, the references and stored curves; False (and
    no file) if there is nothing of ours to draw."""
    agents = [agent for agent in suite.agents if (agent, task_name) in finished]
    stored = [curve for curve in suite.stored_curves if curve.task == task_name]
    if not agents and not stored:
        return False
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import matplotlib.ticker

    palette = plt.get_cmap("tab10").colors
    names = list(suite.agents) + [curve.agent for curve in stored if curve.agent not in suite.agents]
    color = {agent: palette[index % len(palette)] for index, agent in enumerate(names)}
    figure, axes = plt.subplots(figsize=(9, 4.5))
    task = suite.task(task_name)
    right = task.steps * 1.02  # the axis ends at our budget: a reference measured later is marked on its edge
    for agent in agents:
        records = finished[(agent, task_name)]
        steps = np.asarray(records[0]["curve"]["steps"])
        values = np.array([[np.nan if v is None else v for v in record["curve"]["average_return"]]
                           for record in records], dtype=np.float64)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # points before any seed's first episode
            mean, std = np.nanmean(values, axis=0), np.nanstd(values, axis=0)
        axes.plot(steps, mean, color=color[agent], label=f"{agent} ({len(records)} seed{'s' * (len(records) > 1)})")
        axes.fill_between(steps, mean - std, mean + std, color=color[agent], alpha=0.2, linewidth=0)
        greedy = _mean_std([record.get("greedy", {}).get("mean_return") for record in records])
        if greedy is not None:  # the final policies without exploration, at the budget
            axes.errorbar([task.steps], [greedy[0]], yerr=[[greedy[1]], [greedy[1]]], color=color[agent],
                          marker="D", markersize=6, capsize=3, linestyle="none",
                          label=f"{agent}: final policy without exploration ({greedy[2]} seeds)")
    for agent in suite.agents:
        for ref in suite.references_for(agent, task_name):
            label = f"{agent}: {ref.source.key}, {_reference_text(ref).split(' [')[0]}"
            if ref.steps is None:
                axes.axhline(ref.mean, color=color[agent], linestyle="--", linewidth=1, label=label)
            elif ref.steps > right:
                axes.plot([right], [ref.mean], color=color[agent], marker=">", markersize=10, linestyle="none",
                          clip_on=False, label=f"{label} (beyond this axis)")
            else:
                axes.errorbar([ref.steps], [ref.mean], yerr=[[ref.std or 0.0], [ref.std or 0.0]], color=color[agent],
                              marker="*", markersize=12, capsize=4, linestyle="none", label=label)
    for curve in stored:
        steps, values = _read_stored(curve)
        axes.plot(steps, values, color=color[curve.agent], linestyle=":", label=curve.label)
    axes.set_xlim(0, right)
    axes.xaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda x, _: _steps(int(x)) if x else "0"))
    axes.set_xlabel("environment steps")
    axes.set_ylabel(f"average return (last {task.return_window} episodes)")
    axes.set_title(f"{suite.name}: {task_name}")
    axes.grid(alpha=0.3)
    # Under the curves, never on them; the figure grows to hold it.
    axes.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.14), ncol=2, frameon=False)
    figure.tight_layout()
    figure.savefig(path, dpi=100, bbox_inches="tight")
    plt.close(figure)
    return True


def _read_stored(curve) -> Tuple[List[float], List[float]]:
    import csv

    with open(os.path.join(REPO, curve.path), newline="") as f:
        rows = [row for row in csv.DictReader(f) if row.get(curve.return_column)]
    return [float(row[curve.step_column]) for row in rows], [float(row[curve.return_column]) for row in rows]


def describe(records: Dict[int, Dict[str, Any]]) -> str:
    """One progress line's ending for a group's records: each seed's final average, or its error."""
    parts = []
    for seed, record in sorted(records.items()):
        if "error" in record:
            parts.append(f"seed {seed} FAILED ({record['error']})")
        else:
            parts.append(f"seed {seed} final {_number(record['final_average_return'])}")
    return ", ".join(parts)
