"""Presets (`--preset NAME`, launch/presets/NAME.json): every entry is a valid config for its agent, a preset's
values come before `--config` (which wins), a wrong name is a parser error naming the choices, and `--resume` keeps
the run's preset. Nothing here trains: the command lines are planned (`launch.cli.train.plan`)."""

import contextlib
import io
import json
import os

import pytest

from launch.cli.train import plan
from launch.experiments.make import make_agent_config, make_experiment_config
from launch.experiments.presets import load_preset, preset_names, preset_overrides
from launch.lifecycle.run_directory import write_config
from run_helpers import command_line


def _refused(*argv) -> str:
    result = command_line(*argv)
    assert result.returncode == 2, result.stdout + result.stderr
    return result.stderr


@pytest.mark.parametrize("name", preset_names())
def test_every_entry_is_a_valid_config_for_its_agent(name):
    preset = load_preset(name)
    assert preset.description and preset.agents
    for agent, entry in preset.agents.items():
        make_agent_config(agent, preset=name)
        for task in entry.tasks:
            config = make_agent_config(agent, preset=name, environment=task)
            for field, value in {**entry.config, **entry.tasks[task]}.items():
                expected = tuple(value) if isinstance(value, list) else value
                assert getattr(config, field) == expected, (name, agent, task, field)


def test_the_suites_presets_exist():
    assert {"classic", "dmc", "mujoco", "minatar"} <= set(preset_names())


def test_task_values_apply_after_the_agents_own():
    hopper = make_agent_config("d4pg", preset="mujoco", environment="Hopper-v5")
    cheetah = make_agent_config("d4pg", preset="mujoco", environment="HalfCheetah-v5")
    other = make_agent_config("d4pg", preset="mujoco", environment="Ant-v5")  # not named: the agent's own values
    assert (hopper.v_min, hopper.v_max) == (-100.0, 500.0)
    assert (cheetah.v_min, cheetah.v_max) == (-200.0, 1500.0)
    assert (other.v_min, other.v_max) == (-500.0, 1500.0)
    assert hopper.policy_learning_rate == 3e-4 and hopper.min_replay_size == 10_000
    assert preset_overrides("mujoco", "d4pg", "Hopper-v5")[-2:] == ["v_min=-100.0", "v_max=500.0"]


def test_config_wins_over_the_preset():
    run = plan(["--agent", "dqn", "--env", "MountainCar-v0", "--preset", "classic", "--config", "learning_rate=0.01"])
    assert run.config.preset == "classic"
    assert run.config.agent_config.learning_rate == 0.01  # --config
    assert run.config.agent_config.batch_size == 128  # the preset's MountainCar-v0 entry
    assert run.config.agent_config.hidden_sizes == (256, 256)
    assert plan(["--agent", "dqn", "--env", "CartPole-v1"]).config.preset is None


def test_anakin_takes_the_preset_and_config_wins():
    run = plan(["--agent", "ppo", "--env", "gymnax/Breakout-MinAtar", "--launch", "anakin", "--preset", "minatar",
                "--config", "learning_rate=1e-4"])
    assert run.config.agent_config.batch_size == 64 and run.config.agent_config.unroll_length == 128
    assert run.config.agent_config.learning_rate == 1e-4


def test_unknown_preset_is_a_parser_error_naming_the_choices():
    stderr = _refused("--agent", "dqn", "--env", "CartPole-v1", "--preset", "atari")
    assert "--preset atari: no such preset" in stderr and "classic, dmc, minatar, mujoco" in stderr


def test_preset_without_the_agent_is_a_parser_error_naming_its_agents():
    stderr = _refused("--agent", "dqn", "--env", "CartPole-v1", "--preset", "mujoco")
    assert "--preset mujoco has no entry for agent 'dqn'; it has: d4pg, mpo, sac, td3" in stderr
    stderr = _refused("--agent", "r2d2", "--env", "gymnax/CartPole-v1", "--launch", "anakin", "--preset", "mujoco")
    assert "--preset mujoco has no entry for agent 'r2d2'" in stderr


def test_offline_runs_refuse_presets():
    stderr = _refused("--agent", "bc", "--dataset", "cartpole/expert-v0", "--env", "CartPole-v1", "--preset", "classic")
    assert "--preset does not work in mode offline" in stderr


def _saved_run(run_dir, preset):
    write_config(make_experiment_config(agent="dqn", environment="MountainCar-v0", max_num_actor_steps=100,
                                        run_dir=str(run_dir), preset=preset))


def test_resume_keeps_the_preset(tmp_path):
    _saved_run(tmp_path, "classic")
    with open(tmp_path / "config.json") as f:
        assert json.load(f)["preset"] == "classic"
    resumed = plan(["--resume", str(tmp_path)])
    assert resumed.config.preset == "classic"
    assert resumed.config.agent_config.batch_size == 128
    assert plan(["--resume", str(tmp_path), "--preset", "classic"]).config.preset == "classic"
    stderr = _refused("--resume", str(tmp_path), "--preset", "mujoco")
    assert "the run there is 'classic'" in stderr and "--preset" in stderr


def test_a_run_without_a_preset_resumes_without_one(tmp_path):
    _saved_run(tmp_path, None)
    with open(tmp_path / "config.json") as f:
        saved = json.load(f)
    saved.pop("preset")  # a run directory written before presets were recorded
    with open(tmp_path / "config.json", "w") as f:
        json.dump(saved, f)
    assert plan(["--resume", str(tmp_path)]).config.preset is None
    with contextlib.redirect_stderr(io.StringIO()), pytest.raises(SystemExit):
        plan(["--resume", str(tmp_path), "--preset", "classic"])
    assert os.path.exists(tmp_path / "config.json")
