"""launch.train, the command line's Python form: start over, resume and refuse as `python -m launch` does; and an
agent of one's own (an unregistered AgentDefinition) with a run directory, its snapshot loaded by passing the
definition again, never by importing what the run directory names."""

import dataclasses
import json

import numpy as np
import pytest

import launch
from acmelike.checkpointing import CheckpointError
from acmelike.wrappers import make_gymnasium_environment
from agents.dqn import AGENT as DQN
from launch.cli.train import plan
from launch.lifecycle.run_directory import RunDirectoryRefused

SMALL = ["min_replay_size=50", "hidden_sizes=16"]
# An agent of this module's own: DQN's pieces under another name, registered nowhere.
MY_DQN = dataclasses.replace(DQN, name="my_dqn", anakin=None)


def dqn_config(run_dir, steps, agent="dqn"):
    return launch.make_experiment_config(agent=agent, environment="CartPole-v1", max_num_actor_steps=steps,
                                         run_dir=run_dir and str(run_dir), config_overrides=SMALL,
                                         progress_period_s=60)


def test_train_starts_over_resumes_and_refuses_as_the_command_line_does(tmp_path):
    run_dir = tmp_path / "run"
    first = launch.train(dqn_config(run_dir, 300))
    assert first["env_steps"] >= 300 and not first["failed"], first
    with pytest.raises(RunDirectoryRefused, match="overwrite=True"):  # a notebook cell run again: it says what to pass
        launch.train(dqn_config(run_dir, 300))
    again = launch.train(dqn_config(run_dir, 300), overwrite=True)
    assert again["env_steps"] == first["env_steps"]  # the seeded local replay: the same run
    with pytest.raises(ValueError, match="launch='single'"):  # resumed on another engine: refused, nothing written
        launch.train(dqn_config(run_dir, 600), resume=True, launch="local_mp", actors=2)
    with pytest.raises(ValueError, match="pass one"):
        launch.train(dqn_config(run_dir, 600), resume=True, overwrite=True)
    # run_distributed's keyword is `launch`, as train's and the flag's; its former name still works, with a warning.
    with pytest.warns(DeprecationWarning, match="pass launch="), pytest.raises(ValueError, match="Unknown launch 'x'"):
        launch.run_distributed(dqn_config(None, 300), 1, launch_type="x")
    resumed = launch.train(dqn_config(run_dir, 600), resume=True)
    assert json.loads((run_dir / "resumed.json").read_text())["step"] == again["env_steps"]
    assert resumed["env_steps"] >= 600, resumed


def test_an_unregistered_agent_trains_with_a_run_directory_and_only_its_definition_loads_it_back(tmp_path, capsys):
    run_dir = tmp_path / "mine"
    summary = launch.train(dqn_config(run_dir, 300, agent=MY_DQN))
    assert summary["agent"] == "my_dqn" and summary["env_steps"] >= 300, summary
    saved = json.loads((run_dir / "config.json").read_text())
    assert saved["agent_reference"].endswith(":MY_DQN"), saved  # where it lives, said, never imported
    with pytest.raises(CheckpointError, match="my_dqn"):
        launch.load_actor(str(run_dir))  # the registry does not know it
    actor = launch.load_actor(str(run_dir), agent=MY_DQN)
    timestep = make_gymnasium_environment("CartPole-v1", seed=0).reset()
    assert int(np.asarray(actor.select_action(timestep.observation))) in (0, 1)
    with pytest.raises(SystemExit):  # --resume refuses: it would have to import what config.json names
        plan(["--resume", str(run_dir)])
    assert "MY_DQN" in capsys.readouterr().err
    resumed = launch.train(dqn_config(run_dir, 600, agent=MY_DQN), resume=True)  # the script passes it again
    assert resumed["env_steps"] >= 600, resumed


def test_an_agent_of_ones_own_needs_a_name_of_its_own_and_a_definition_for_a_run_directory(tmp_path):
    impostor = dataclasses.replace(DQN, name="dqn", anakin=None)
    with pytest.raises(ValueError, match="registered agent's name"):
        dqn_config(tmp_path / "a", 100, agent=impostor)
    config = dqn_config(None, 100, agent=MY_DQN)
    with pytest.raises(ValueError, match="AgentDefinition"):  # a bare builder under an unknown name, with run_dir
        dataclasses.replace(config, run_dir=str(tmp_path / "b"), agent_reference=None)
