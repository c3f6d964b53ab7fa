"""The results runner's `jax` suite: each fully jitted row (`<agent>@anakin`) beside its single-process twin.

A twin pair trains the same agent with the same settings, one with `--launch anakin` on the task's JAX environment
(its seeds in one vmapped call), the other in one process on the task's own, and the page says whether the two
agree within their seeds' spread. No training here: the commands, and the page written from records."""

import json
import os

from benchmarks.results_runner.cells import CellGroup, cell_path, groups
from benchmarks.results_runner.report import twin_agreement, write_report
from benchmarks.results_runner.suites import SUITES

JAX = SUITES["jax"]


def _value(argv, flag):
    return argv[argv.index(flag) + 1]


def test_a_fully_jitted_row_runs_its_agent_with_launch_anakin_beside_its_twin_in_one_process():
    pendulum = JAX.task("Pendulum-v1")
    todo, done = groups(JAX, ["sac", "sac@anakin"], [pendulum.name], [0, 1, 2], "/nonexistent")
    assert not done and [(group.agent, group.seeds) for group in todo] == [
        ("sac", (0,)), ("sac", (1,)), ("sac", (2,)), ("sac@anakin", (0, 1, 2))]
    single, anakin = todo[0].command("RUN"), todo[-1].command("RUN")
    assert _value(single, "--agent") == _value(anakin, "--agent") == "sac"
    assert (_value(single, "--env"), _value(anakin, "--env")) == ("Pendulum-v1", "gymnax/Pendulum-v1")
    assert _value(single, "--replay") == "local" and "--launch" not in single
    assert (_value(anakin, "--launch"), _value(anakin, "--seeds")) == ("anakin", "0,1,2")
    settings = [[argv[i + 1] for i, flag in enumerate(argv) if flag in ("--config", "--preset")]
                for argv in (single, anakin)]
    assert settings[0] == settings[1] and settings[0], settings  # the same agent with the same settings
    assert todo[-1].run_name == "seeds_0_1_2" and todo[0].run_name == "seed_0"
    breakout = CellGroup(JAX, "dqn@anakin", JAX.task("Breakout-MinAtar"), (0, 1))
    assert _value(breakout.command("RUN"), "--preset") == "minatar"  # the task's preset, where the suite has none
    assert _value(breakout.command("RUN"), "--env") == "gymnax/Breakout-MinAtar"


def test_twins_agree_within_the_larger_spread_of_their_seeds():
    assert twin_agreement([-150.0, -170.0], [-160.0, -200.0]) == (-20.0, "agree")  # stds 10 and 20
    difference, label = twin_agreement([-150.0, -152.0], [-190.0, -194.0])
    assert difference == -41.0 and label == "**disagree**"


def test_the_page_puts_each_fully_jitted_row_beside_its_twin(tmp_path):
    finals = {"td3": [-150.0, -160.0, -170.0], "td3@anakin": [-400.0, -410.0, -420.0]}
    for row, values in finals.items():
        for seed, final in enumerate(values):
            path = cell_path(str(tmp_path), "jax", row, "Pendulum-v1", seed)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            record = {"agent": row, "task": "Pendulum-v1", "seed": seed, "final_average_return": final,
                      "best_average_return": final, "env_steps": 20_000, "wall_seconds": 1.0, "cpu_seconds": 1.0,
                      "commit": "0" * 40, "curve": {"steps": [10_000, 20_000], "average_return": [final, final]}}
            with open(path, "w") as f:
                json.dump(record, f)
    page = open(write_report(JAX, str(tmp_path))[0]).read()
    assert "| td3 | Pendulum-v1 | -160.0 ± 8.2 (3) | -410.0 ± 8.2 (3) | -250.0 | **disagree** |" in page
    assert "`--preset minatar`" in page and "| sac |" not in page.split("## Fully jitted")[1].split("##")[0]
