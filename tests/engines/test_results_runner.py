"""The results runner (`python -m benchmarks.results_runner`) on its tiny suite: two cells (DQN on CartPole-v1,
300 steps, seeds 0 and 1), each a `python -m launch` process. It keeps each cell's JSON, writes the table and a
PNG, evaluates each final policy without exploration, and resumes: a second invocation skips finished cells, and a
cell whose JSON is deleted runs again alone (and, with --replay local, gives the same numbers). No test asserts a
published number: results are data."""

import json
import os
import shutil

import numpy as np
import pytest

from benchmarks.results_runner import report
from benchmarks.results_runner.__main__ import parse_seeds
from benchmarks.results_runner.report import _trimmed_mean, iqm_interval, verdict
from benchmarks.results_runner.suites import SUITES, Reference, Source
from launch.experiments.presets import load_preset
from launch.registry import AGENTS
from run_helpers import command_line
from stack import require

RUNNER = "benchmarks.results_runner.__main__"
FIELDS = {"suite", "agent", "task", "seed", "preset", "command", "env_steps", "episodes", "final_average_return",
          "best_average_return", "average_return_at_steps", "curve", "wall_seconds", "cpu_seconds", "commit",
          "packages", "machine", "summary", "exit_code"}


def _run(out, runs, *extra):
    result = command_line("--suite", "tiny", "--out", out, "--runs", runs, *extra, module=RUNNER)
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    """The tiny suite run once (both cells at once): (out, runs, stdout)."""
    out, runs = tmp_path_factory.mktemp("results"), tmp_path_factory.mktemp("runs")
    return str(out), str(runs), _run(str(out), str(runs), "--jobs", "2")


def _cell(out, seed):
    with open(os.path.join(out, "tiny", "cells", "dqn", "CartPole-v1", f"seed_{seed}.json")) as f:
        return json.load(f)


def test_each_cell_keeps_its_json(tiny):
    out, runs, stdout = tiny
    assert "0 cells finished (kept), 2 to run in 2 processes" in stdout
    for seed in (0, 1):
        cell = _cell(out, seed)
        assert FIELDS <= set(cell), sorted(FIELDS - set(cell))
        assert cell["seed"] == seed and cell["exit_code"] == 0 and cell["preset"] == "classic"
        assert cell["env_steps"] >= 300 and cell["episodes"] >= 1
        assert cell["command"][:3] == ["python", "-m", "launch"]
        assert ["--seed", str(seed)] == cell["command"][cell["command"].index("--seed"):][:2]
        assert "--replay" in cell["command"] and "local" in cell["command"]
        assert len(cell["curve"]["steps"]) == len(cell["curve"]["average_return"]) == 100
        assert cell["curve"]["steps"][-1] == 300 and cell["curve"]["average_return"][-1] is not None
        assert cell["best_average_return"] >= cell["final_average_return"] or cell["episodes"] < 20
        assert cell["wall_seconds"] > 0 and cell["cpu_seconds"] > 0
        assert cell["packages"]["jax"] and cell["machine"]["cores"] >= 1
        assert os.path.exists(os.path.join(runs, "tiny", "dqn", "CartPole-v1", f"seed_{seed}", "actor.csv"))
        greedy = cell["greedy"]  # the final policy, 2 episodes without exploration, in its own process
        assert greedy["episodes"] == 2 and len(greedy["returns"]) == 2 and greedy["seed"] == 100
        assert greedy["mean_return"] == pytest.approx(np.mean(greedy["returns"]), abs=1e-3)
        assert greedy["step"] == cell["env_steps"] and greedy["command"][:3] == ["python", "-m", "launch.cli.evaluate"]


def test_the_page_has_the_table_and_a_png(tiny):
    out, _, _ = tiny
    with open(os.path.join(out, "tiny.md")) as f:
        page = f.read()
    assert "| agent | task | budget | seeds | final (mean ± std) |" in page
    assert "| dqn | CartPole-v1 | 300 | 2 of 2 |" in page
    assert "rl-baselines3-zoo" in page and "no comparison: our budget (300) is below the reference's (50k)" in page
    assert "![CartPole-v1](tiny/CartPole-v1.png)" in page
    png = os.path.join(out, "tiny", "CartPole-v1.png")
    with open(png, "rb") as f:
        assert f.read(8) == b"\x89PNG\r\n\x1a\n"


def test_a_page_that_fails_to_render_leaves_the_old_page(tiny, tmp_path, monkeypatch):
    """The page is written whole or not at all: a runner killed (or failing) while it renders keeps the old page."""
    out = tmp_path / "results"
    shutil.copytree(tiny[0], out)
    old = (out / "tiny.md").read_text()

    def interrupted(*args):
        raise KeyboardInterrupt

    monkeypatch.setattr(report, "markdown", interrupted)
    with pytest.raises(KeyboardInterrupt):
        report.write_report(SUITES["tiny"], str(out))
    assert (out / "tiny.md").read_text() == old and not (out / "tiny.md.tmp").exists()


def test_resume_skips_finished_cells_and_reruns_a_deleted_one(tiny):
    out, runs, _ = tiny
    kept, rerun = _cell(out, 0), _cell(out, 1)
    os.remove(os.path.join(out, "tiny", "cells", "dqn", "CartPole-v1", "seed_1.json"))
    stdout = _run(out, runs)
    assert "1 cells finished (kept), 1 to run in 1 processes" in stdout
    assert "seed 1" in stdout and "seeds 0" not in stdout and "CartPole-v1 seed 0:" not in stdout
    assert _cell(out, 0) == kept  # untouched
    again = _cell(out, 1)
    assert again["started_at"] >= rerun["started_at"]
    # --replay local: the same seed gives the same episodes
    assert again["curve"] == rerun["curve"] and again["final_average_return"] == rerun["final_average_return"]
    listing = command_line("--suite", "tiny", "--out", out, "--runs", runs, "--list", module=RUNNER).stdout
    assert listing.count("done") == 2 and "to run" not in listing


def test_record_finished_records_a_run_directory_trained_elsewhere_without_training(tiny):
    """A finished run copied into --runs (trained on another machine) is recorded from its files: the same
    returns, marked as such, with the training run's device in place of this machine and its packages."""
    out, runs, _ = tiny
    trained = _cell(out, 0)
    os.remove(os.path.join(out, "tiny", "cells", "dqn", "CartPole-v1", "seed_0.json"))
    actor_log = os.path.join(runs, "tiny", "dqn", "CartPole-v1", "seed_0", "actor.csv")
    modified = os.path.getmtime(actor_log)
    stdout = _run(out, runs, "--record-finished")
    assert "1 to run" in stdout and os.path.getmtime(actor_log) == modified  # nothing trained
    recorded = _cell(out, 0)
    assert recorded["recorded_from_finished_run"] is True and recorded["machine"] is None
    assert recorded["curve"] == trained["curve"] and recorded["final_average_return"] == trained["final_average_return"]
    assert recorded["greedy"]["mean_return"] == trained["greedy"]["mean_return"]


def test_evaluate_missing_fills_in_a_cell_stored_without_its_greedy_returns(tiny):
    out, runs, _ = tiny
    path = os.path.join(out, "tiny", "cells", "dqn", "CartPole-v1", "seed_0.json")
    record = _cell(out, 0)
    stored = record.pop("greedy")
    with open(path, "w") as f:
        json.dump(record, f)
    stdout = _run(out, runs, "--evaluate-missing", "--report-only")
    assert f"dqn CartPole-v1 seed 0: greedy {stored['mean_return']:.1f} over 2 episodes" in stdout
    assert "seed 1:" not in stdout  # it had them
    assert _cell(out, 0)["greedy"] == stored  # the same snapshot and seed: the same returns


def test_verdicts_compare_greedy_returns_with_evaluation_sources_at_our_budget():
    records = [{"final_average_return": 100.0, "average_return_at_steps": {"1000": 100.0}, "greedy": {"mean_return": g}}
               for g in (480.0, 500.0)]
    evaluated = Source("E", "evaluated without exploration", evaluation=True)
    training = Source("T", "training returns")
    assert verdict(Reference("a", "t", 500.0, 30.0, 1000, evaluated, "env"), records, 1000) == (
        "490.0 ± 10.0 (greedy)", "within 1 std")
    assert verdict(Reference("a", "t", 500.0, 30.0, 1000, training, "env"), records, 1000) == ("100.0 ± 0.0", "below")
    # At another step count than our budget the greedy returns (of the final policy) say nothing: the curve does.
    records[0]["average_return_at_steps"]["500"] = records[1]["average_return_at_steps"]["500"] = 90.0
    assert verdict(Reference("a", "t", 500.0, 30.0, 500, evaluated, "env"), records, 1000) == ("90.0 ± 0.0", "below")
    # Greedy only where every seed has it.
    del records[1]["greedy"]
    assert verdict(Reference("a", "t", 500.0, 30.0, 1000, evaluated, "env"), records, 1000) == ("100.0 ± 0.0", "below")


def test_iqm_and_its_bootstrap_interval():
    scores = [10.0, 200.0, 30.0, 40.0, 50.0]
    interval = iqm_interval(scores, reps=2000)
    assert interval.iqm == pytest.approx(40.0)  # int(0.25 * 5) = 1 cut from each end: mean of 30, 40, 50
    assert interval.low <= interval.iqm <= interval.high
    assert interval.method == "rliable" or interval.method.startswith("numpy bootstrap")
    samples = np.array([[1.0, 2.0, 3.0, 4.0, 100.0, 6.0, 7.0, 8.0]])
    assert _trimmed_mean(samples)[0] == pytest.approx(np.mean([3.0, 4.0, 6.0, 7.0]))


def test_the_bootstrap_interval_repeats_whatever_numpys_global_generator_holds():
    # rliable resamples with numpy's global generator: the interval must not follow it, nor move it.
    scores = [-123.8, -106.5, -235.9, -180.8, -141.3]
    intervals = []
    for global_seed in range(3):
        np.random.seed(global_seed)
        intervals.append(iqm_interval(scores, reps=1000))
        assert np.random.rand() == np.random.RandomState(global_seed).rand()
    assert len(set(intervals)) == 1, intervals


def test_suites_name_registered_agents_with_preset_entries():
    assert {"classic", "mujoco", "minatar", "jax", "tiny"} <= set(SUITES)
    for suite in SUITES.values():
        names = {task.name for task in suite.tasks}
        for agent, tasks in suite.cells.items():
            assert suite.agent_of(agent) in AGENTS, (suite.name, agent)
            assert set(tasks) <= names, (suite.name, agent)
            for task in tasks:  # a cell runs with its preset's entry, or with the suite's own settings
                preset = suite.preset_of(task)
                assert (suite.agent_of(agent) in load_preset(preset).agents if preset
                        else suite.config.get(agent)), (suite.name, agent, task)
        for ref in suite.references:
            assert ref.task in suite.cells.get(ref.agent, ()), (suite.name, ref)
            assert ref.source.text and ref.environment
    assert parse_seeds("0-4") == [0, 1, 2, 3, 4] and parse_seeds("0,3,7-8") == [0, 3, 7, 8]


def test_a_kept_curve_averages_the_episodes_ended_by_each_step_and_its_stored_files_exist(tmp_path):
    from benchmarks.keep_curve import keep_curve

    run = tmp_path / "run"
    run.mkdir()
    rows = [(3, 1.0), (7, 3.0), (12, 5.0), (18, 7.0), (25, 9.0)]  # (actor_steps at the episode's end, return)
    (run / "actor.csv").write_text("episode_return,actor_steps\n" + "".join(f"{r},{s}\n" for s, r in rows))
    (run / "config.json").write_text("{}")
    written = keep_curve(str(run), str(tmp_path / "kept"), every=10, window=2)
    assert [os.path.basename(p) for p in written] == ["training.csv", "config.json"]
    lines = (tmp_path / "kept" / "training.csv").read_text().split()
    # By step 10: episodes ending at 3 and 7 (mean 2); by 20: the last two of four (6); step 30 is past the end.
    assert lines == ["actor_steps,mean_return_last_2_episodes,episodes", "10,2.0,2", "20,6.0,4"]
    with pytest.raises(FileNotFoundError, match="actor.csv"):
        keep_curve(str(tmp_path), str(tmp_path / "none"))
    # The curves the suites draw are kept in the repository.
    for suite in SUITES.values():
        for curve in suite.stored_curves:
            header = open(os.path.join(os.path.dirname(__file__), "..", "..", curve.path)).readline().strip()
            assert {curve.step_column, curve.return_column} <= set(header.split(",")), curve.path


def test_an_anakin_group_with_a_checkpoint_is_resumed_not_restarted(tmp_path):
    """A vmapped group stopped part way (`--launch anakin` keeps checkpoints with --run-dir) continues with
    `--resume RUN_DIR`; a save cut short (`*.tmp`) or a directory of another mode is no such checkpoint."""
    from benchmarks.results_runner.cells import CellGroup, has_anakin_checkpoint, resumable_stop

    run_dir = tmp_path / "seeds_0_1_2_3_4"
    (run_dir / "checkpoints" / "000000001024.tmp").mkdir(parents=True)
    (run_dir / "run_options.json").write_text('{"launch": "anakin"}')
    assert not has_anakin_checkpoint(str(run_dir))
    (run_dir / "checkpoints" / "000000000512").mkdir()
    assert has_anakin_checkpoint(str(run_dir))
    minatar = SUITES["minatar"]
    group = CellGroup(minatar, "dqn", minatar.task("Breakout-MinAtar"), (0, 1, 2, 3, 4))
    # SIGTERM's and SIGINT's exit codes leave no record (the group is unfinished); a failure does.
    assert resumable_stop(group, 143, str(run_dir)) and resumable_stop(group, 130, str(run_dir))
    assert not resumable_stop(group, 1, str(run_dir))
    (run_dir / "run_options.json").write_text('{"launch": "local_mp"}')
    assert not has_anakin_checkpoint(str(run_dir))
    (run_dir / "run_options.json").unlink()
    (run_dir / "anakin.json").write_text("{}")  # an Anakin run directory written before run_options.json
    assert has_anakin_checkpoint(str(run_dir))


def test_a_task_that_repeats_actions_trains_its_decisions_and_counts_environment_steps(tmp_path):
    """dmc's cartpole-swingup at repeat 8: the cell trains 12,500 decisions (--action-repeat 8, the task's own
    --config after the preset), and its record's curve and steps are the 100k environment steps they make."""
    from benchmarks.results_runner.cells import CellGroup, seed_results
    from benchmarks.results_runner.suites import Task

    suite = SUITES["dmc"]
    group = CellGroup(suite, "sac", suite.task("cartpole-repeat8"), (0,))
    argv = group.command(str(tmp_path))
    assert argv[argv.index("--steps") + 1] == "12500" and argv[argv.index("--action-repeat") + 1] == "8"
    assert argv.index("--preset") < argv.index("discount=0.99")  # the task's override wins over the preset
    # 100 episodes of 125 decisions, as actor.csv and summary.json count them: the episode's number as its return.
    rows = ["episode_return,episode_length,actor_steps"] + [f"{k},125,{125 * k}" for k in range(1, 101)]
    (tmp_path / "actor.csv").write_text("\n".join(rows) + "\n")
    (tmp_path / "summary.json").write_text(json.dumps({"env_steps": 12_500}))
    results = seed_results(str(tmp_path), group, 0)
    assert results["env_steps"] == 100_000 and results["curve"]["steps"][-1] == 100_000
    assert results["average_return_at_steps"]["100000"] == pytest.approx(np.mean(range(91, 101)))
    halfway = results["curve"]["steps"].index(50_000)  # 50 episodes of 1,000 environment steps have ended
    assert results["curve"]["average_return"][halfway] == pytest.approx(np.mean(range(41, 51)))
    with pytest.raises(ValueError, match="multiple of action_repeat"):
        Task("odd", "dm_control/cartpole-swingup", 1_000, action_repeat=3)
