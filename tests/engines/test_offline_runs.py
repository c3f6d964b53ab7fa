"""Offline runs are full runs: checkpoints and resume to the learner-step budget, TensorBoard, logs and curve,
`--eval-every 0` without an evaluator, and a clean stop at a signal. In-process, through `launch.cli.train.main`,
on a small recorded dataset and a small BC."""

import json
import os
import signal

import pytest
from stack import require

from launch.cli.train import main

DATASET = "cartpole/random-v0"
SMALL_BC = ["--config", "batch_size=16", "--config", "num_sgd_steps_per_step=2", "--config", "hidden_sizes=16"]


@pytest.fixture(scope="module")
def dataset(tmp_path_factory):
    require("minari")
    from launch.cli.record import record

    previous = os.environ.get("MINARI_DATASETS_PATH")
    os.environ["MINARI_DATASETS_PATH"] = str(tmp_path_factory.mktemp("minari"))
    try:
        record(dataset_id=DATASET, episodes=3, environment="CartPole-v1", seed=0)
        yield DATASET
    finally:
        if previous is None:
            os.environ.pop("MINARI_DATASETS_PATH", None)
        else:
            os.environ["MINARI_DATASETS_PATH"] = previous


def _bc(run_dir, *flags):
    return ["--agent", "bc", "--env", "CartPole-v1", "--dataset", DATASET, "--run-dir", str(run_dir), *SMALL_BC,
            "--progress-seconds", "60", *flags]


def _summary(capsys) -> dict:
    return json.loads(capsys.readouterr().out.rstrip("\n").splitlines()[-1])


def test_an_offline_run_checkpoints_and_resumes_to_its_budget(dataset, tmp_path, capsys):
    run_dir = tmp_path / "bc"
    assert main(_bc(run_dir, "--steps", "40", "--eval-every", "20", "--tensorboard")) == 0
    first = _summary(capsys)
    assert first["launch"] == "offline" and first["learner_steps"] == 40 and first["interrupted"] is False
    assert [step for step, _ in first["evaluations"]] == [20, 40] and first["failures"] == []
    assert sorted(os.listdir(run_dir / "checkpoints")) == ["000000000040"]
    assert json.loads((run_dir / "config.json").read_text())["dataset"] == DATASET
    assert os.path.getsize(run_dir / "learning_curve.png") > 1000
    assert {"learner", "evaluator"} <= set(os.listdir(run_dir / "tensorboard"))

    # --resume needs no other flag; --steps given with it raises the budget.
    assert main(["--resume", str(run_dir), "--steps", "60"]) == 0
    resumed = _summary(capsys)
    assert json.loads((run_dir / "resumed.json").read_text())["step"] == 40
    assert resumed["learner_steps"] == 60 and [step for step, _ in resumed["evaluations"]] == [20, 40, 60]
    assert resumed["evaluations"][:2] == first["evaluations"]  # the rounds were checkpointed with the run
    rows = (run_dir / "evaluator.csv").read_text().splitlines()
    assert [row.split(",")[0] for row in rows[1:]] == ["20", "40", "60"]


def test_eval_every_zero_runs_no_evaluator(dataset, tmp_path, capsys):
    run_dir = tmp_path / "bc"
    assert main(_bc(run_dir, "--steps", "20", "--eval-every", "0")) == 0
    summary = _summary(capsys)
    assert summary["evaluations"] == [] and summary["average_evaluation_return"] is None
    assert not (run_dir / "evaluator.csv").exists()
    assert os.listdir(run_dir / "checkpoints") == ["000000000020"]


def test_a_signal_ends_an_offline_run_with_an_interrupted_summary(dataset, tmp_path, capsys, monkeypatch):
    from launch.engines import offline

    add = offline.EvaluationRounds.add

    def add_then_terminate(self, *args):  # as a scheduler would, after the first evaluation round
        average = add(self, *args)
        os.kill(os.getpid(), signal.SIGTERM)
        return average

    monkeypatch.setattr(offline.EvaluationRounds, "add", add_then_terminate)
    run_dir = tmp_path / "bc"
    assert main(_bc(run_dir, "--steps", "1000", "--eval-every", "10")) == 143
    summary = _summary(capsys)
    assert summary["interrupted"] is True and summary["signal"] == "SIGTERM" and summary["learner_steps"] == 10
    assert json.loads((run_dir / "summary.json").read_text())["interrupted"] is True
    assert os.listdir(run_dir / "checkpoints") == ["000000000010"]  # the stop is a clean one: checkpointed
