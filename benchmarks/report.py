"""The summary of a benchmark run: one markdown table (results/summary.md) and one PNG per benchmark file.

Reads the rows of every `results/<name>.json` that `run_all.py` wrote in this run and draws each figure beside
its baseline, with the ratio and the goal in the title.

    python benchmarks/report.py [--results DIR] [--names env_loop_overhead actor_throughput ...]
"""

import argparse
import json
import os
import sys
from typing import Dict, List

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from acmelike import files  # noqa: E402
from benchmarks.common import RESULTS_DIR  # noqa: E402

ORDER = [
    "env_loop_overhead",
    "actor_throughput",
    "replay_throughput",
    "time_to_solve",
    "startup_time",
    "step_profile",
    "batched_acting",
    "anakin_ppo",
    "anakin_sac",
    "anakin_td3",
    "anakin_d4pg",
    "anakin_mpo",
    "anakin_impala",
    "anakin_r2d2",
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
    "learner_throughput",
]


def _number(value) -> str:
    if value is None:
        return "n/a"
    if isinstance(value, float) and value < 100:
        return f"{value:.2f}"
    return f"{value:,.0f}"


def load(results_dir: str, names: List[str]) -> List[Dict]:
    payloads = []
    for name in names:
        path = os.path.join(results_dir, f"{name}.json")
        if os.path.exists(path):
            with open(path) as f:
                payloads.append(json.load(f))
    return payloads


def markdown(payloads: List[Dict]) -> str:
    lines = [
        "| benchmark | ours | baseline | ratio | goal | met? |",
        "|---|---|---|---|---|---|",
    ]
    for payload in payloads:
        for row in payload.get("rows", []):
            ours = f"{_number(row['ours'])} {row['unit']}" + (
                f" ({row['ours_label']})" if row.get("ours_label") else ""
            )
            base = f"{_number(row['baseline'])} {row['unit']}" + (
                f" ({row['baseline_label']})" if row.get("baseline_label") else ""
            )
            ratio = "n/a" if row["ratio"] is None else f"{row['ratio']:.2f}x"
            met = {True: "yes", False: "**no**", None: "-"}[row["met"]]
            note = f" — {row['note']}" if row.get("note") else ""
            lines.append(f"| {row['benchmark']}{note} | {ours} | {base} | {ratio} | {row['goal'] or '-'} | {met} |")
    first = payloads[0] if payloads else {}
    machine = first.get("machine", {})
    lines += [
        "",
        f"Machine: {machine.get('cpu_model', '?')}, {machine.get('cores', '?')} cores, "
        f"Python {machine.get('python', '?')}. Per benchmark (mode, start, load average then): "
        + "; ".join(
            f"{p['benchmark']} {p.get('mode', '?')} {p.get('started_at', '?')} "
            f"load {(p.get('load_average_at_start') or ['?'])[0]}"
            for p in payloads
        )
        + ". Versions, seeds, compile times and every repeat are in the JSON files beside this one.",
    ]
    return "\n".join(lines) + "\n"


def plot(payload: Dict, results_dir: str) -> List[str]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = [row for row in payload.get("rows", []) if row["ours"] is not None or row["baseline"] is not None]
    if not rows:
        return []
    fig, axes = plt.subplots(1, len(rows), figsize=(4.2 * len(rows), 3.6), squeeze=False)
    for ax, row in zip(axes[0], rows):
        labels = [row.get("ours_label") or "ours", row.get("baseline_label") or "baseline"]
        values = [row["ours"] or 0.0, row["baseline"] or 0.0]
        colors = ["tab:blue", "tab:gray"]
        bars = ax.bar([0, 1], values, color=colors)
        ax.set_xticks([0, 1])
        ax.set_xticklabels([_wrap(label) for label in labels], fontsize=7)
        ax.set_ylabel(row["unit"])
        for bar, value in zip(bars, [row["ours"], row["baseline"]]):
            ax.annotate(
                _number(value),
                (bar.get_x() + bar.get_width() / 2, bar.get_height()),
                ha="center",
                va="bottom",
                fontsize=8,
            )
        ratio = "n/a" if row["ratio"] is None else f"{row['ratio']:.2f}x"
        met = {True: "met", False: "missed", None: ""}[row["met"]]
        goal = f" (goal {row['goal']}: {met})" if row["goal"] else ""
        ax.set_title(f"{_wrap(row['benchmark'], 40)}\nratio {ratio}{goal}", fontsize=8)
        ax.margins(y=0.15)
    fig.tight_layout()
    path = os.path.join(results_dir, f"{payload['benchmark']}.png")
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return [path]


def _wrap(text: str, width: int = 24) -> str:
    words, lines, line = text.split(), [], ""
    for word in words:
        if line and len(line) + 1 + len(word) > width:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}".strip()
    return "\n".join(lines + [line])


def write_report(results_dir: str = RESULTS_DIR, names: List[str] = ORDER) -> str:
    payloads = load(results_dir, names)
    path = os.path.join(results_dir, "summary.md")
    files.write_text(path, markdown(payloads))
    for payload in payloads:
        plot(payload, results_dir)
    return path


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", default=RESULTS_DIR)
    parser.add_argument("--names", nargs="*", default=ORDER)
    args = parser.parse_args(argv)
    path = write_report(args.results, args.names)
    print(open(path).read())
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
