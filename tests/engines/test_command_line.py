"""What a person meets at the command line and in a run directory: parser errors, no silent overwrite, a JSON
last line, native dm_env environments, the evaluator's CSV, and no litter."""

import csv
import json
import os
import subprocess
import sys

import numpy as np
import pytest
from fakes import FakeEnvironment
from run_helpers import command_line
from stack import require


_launch = command_line


@pytest.mark.parametrize(
    "args, flag",
    [
        (["--steps", "0"], "--steps"),
        (["--actors", "0"], "--actors"),
        (["--steps", "ten"], "--steps"),
        (["--eval-every", "-5"], "--eval-every"),
        (["--return-window", "0"], "--return-window"),
        (["--launch", "local_xx"], "--launch"),
        (["--inference", "remote"], "--inference"),
        (["--inference", "central"], "--inference"),  # single process: no inference node to serve actors
    ],
)
def test_bad_flags_are_parser_errors_naming_the_flag(args, flag):
    result = _launch("--agent", "dqn", "--env", "CartPole-v1", *args)
    assert result.returncode == 2, result.stderr
    assert flag in result.stderr and "Traceback" not in result.stderr


def test_a_run_dir_that_is_a_file_or_not_empty_is_refused(tmp_path):
    a_file = tmp_path / "file"
    a_file.write_text("precious")
    result = _launch("--agent", "dqn", "--env", "CartPole-v1", "--run-dir", a_file)
    assert result.returncode == 2 and "--run-dir" in result.stderr and "is a file" in result.stderr
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    (run_dir / "summary.json").write_text("{}")
    result = _launch("--agent", "dqn", "--env", "CartPole-v1", "--run-dir", run_dir)
    assert result.returncode == 2 and "not empty" in result.stderr and "--overwrite" in result.stderr
    assert (run_dir / "summary.json").read_text() == "{}" and a_file.read_text() == "precious"  # nothing lost


def test_unknown_environment_suggests_only_environments_that_fit_the_agent():
    result = _launch("--agent", "dqn", "--env", "CartPol-v1")
    assert result.returncode == 2 and "Traceback" not in result.stderr
    message = result.stderr
    assert "CartPole-v1" in message
    for unfit in ("Pendulum", "FrozenLake", "Blackjack", "MountainCarContinuous"):
        assert unfit not in message, message


def test_single_process_run_ends_with_json_and_evaluator_rows(tmp_path):
    result = _launch("--agent", "dqn", "--env", "CartPole-v1", "--steps", 1500, "--eval-every", 500,
                     "--config", "min_replay_size=200", "--run-dir", tmp_path / "run")
    assert result.returncode == 0, result.stderr[-3000:]
    summary = json.loads(result.stdout.rstrip("\n").splitlines()[-1])
    assert summary["interrupted"] is False and summary["launch"] == "single"
    with open(tmp_path / "run" / "evaluator.csv") as f:
        rows = list(csv.DictReader(f))
    assert rows and {"actor_steps", "average_return", "episodes"} <= set(rows[0])
    assert [int(float(r["actor_steps"])) for r in rows] == sorted(int(float(r["actor_steps"])) for r in rows)
    assert summary["average_evaluator_return"] == pytest.approx(float(rows[-1]["average_return"]))
    assert os.path.getsize(tmp_path / "run" / "learning_curve.png") > 1000


def _native_environment(seed):
    # A native dm_env environment speaking int64 actions and float64 observations, as bsuite's catch does.
    return FakeEnvironment(episode_length=8, observation_shape=(4,), observation_dtype=np.float64, action_dtype=np.int64)


def test_dqn_trains_on_a_native_dm_env_environment_with_int64_actions_without_a_wrapper(tmp_path):
    from launch import make_experiment_config, run_single_process

    config = make_experiment_config(
        agent="dqn", environment="native", environment_factory=_native_environment, max_num_actor_steps=400,
        config_overrides=["min_replay_size=50", "batch_size=8", "num_sgd_steps_per_step=2", "hidden_sizes=16"],
        run_dir=str(tmp_path),
    )
    result = run_single_process(config)  # the fake rejects any action that is not int64
    assert result["env_steps"] >= 400 and result["learner_steps"] > 0


def test_run_single_process_hands_back_the_trained_policy(tmp_path):
    from launch import make_experiment_config, run_single_process

    config = make_experiment_config(
        agent="dqn", environment="CartPole-v1", max_num_actor_steps=600, run_dir=str(tmp_path),
        config_overrides=["min_replay_size=100"],
    )
    result = run_single_process(config)
    assert result.params is not None and result["learner_steps"] > 0
    actor = result.make_evaluation_actor()
    from acmelike.wrappers import make_gymnasium_environment

    environment = make_gymnasium_environment("CartPole-v1", seed=3)
    timestep = environment.reset()
    actor.observe_first(timestep)
    action = actor.select_action(timestep.observation)
    assert int(action) in (0, 1)


def test_a_single_process_run_leaves_no_temporary_directory_behind(tmp_path):
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    result = subprocess.run(
        [sys.executable, "-m", "launch", "--agent", "dqn", "--env", "CartPole-v1", "--steps", "100",
         "--run-dir", str(tmp_path / "run")],
        capture_output=True, text=True, timeout=300, check=False, env={**os.environ, "TMPDIR": str(scratch)},
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert os.listdir(scratch) == []  # Reverb's checkpointer directory included
