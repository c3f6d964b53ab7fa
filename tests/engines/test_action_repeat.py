"""`--action-repeat K` (`ExperimentConfig.action_repeat`): each of the agent's actions is held for K environment
steps in every environment a run builds; config.json, the summary and the snapshot record K, so `--resume` and
`evaluate` repeat as the run did; what cannot repeat (a multi-agent agent, a dataset's recording, Anakin, offline)
says so."""

import json
import os

import numpy as np
import pytest
from run_helpers import command_line, csv_column, summary_line

from acmelike.checkpointing import CheckpointError
from acmelike.wrappers import ActionRepeatWrapper, BatchedEnvironments
from launch.cli.evaluate import evaluate
from launch.cli.record import record
from launch.cli.train import plan
from launch.experiments.make import make_experiment_config
from launch.experiments.parts import AgentParts
from launch.lifecycle.snapshots import load_snapshot

REPEATS = 4


@pytest.fixture(scope="module")
def repeated_run(tmp_path_factory):
    """A short DQN run on CartPole-v1 at repeat 4, with a run directory: (its summary, the directory)."""
    run_dir = str(tmp_path_factory.mktemp("repeat") / "run")
    result = command_line("--agent", "dqn", "--env", "CartPole-v1", "--steps", 300, "--action-repeat", REPEATS,
                          "--config", "min_replay_size=100", "--run-dir", run_dir, "--progress-seconds", 0.01)
    assert result.returncode == 0, result.stderr[-3000:]
    # The progress lines say that their steps are the agent's, each four environment steps.
    progress = [line for line in result.stdout.splitlines() if line.startswith("[dqn CartPole-v1] steps")]
    assert progress and all(line.endswith("each step 4 environment steps (--action-repeat 4)") for line in progress), \
        progress[:3]
    return summary_line(result.stdout), run_dir


def test_every_actor_step_is_four_environment_steps(repeated_run):
    summary, run_dir = repeated_run
    assert summary["action_repeat"] == REPEATS
    with open(os.path.join(run_dir, "config.json")) as f:
        assert json.load(f)["action_repeat"] == REPEATS
    # CartPole pays 1 per environment step: an episode of n decisions returns 4(n - 1) + 1 to 4n (its last run of
    # repeats stops where the pole falls). Without the repeat the return would equal the length.
    returns = csv_column(os.path.join(run_dir, "actor.csv"), "episode_return")
    lengths = csv_column(os.path.join(run_dir, "actor.csv"), "episode_length")
    assert returns and all(REPEATS * (n - 1) + 1 <= r <= REPEATS * n for r, n in zip(returns, lengths)), \
        list(zip(returns, lengths))
    assert sum(lengths) == summary["env_steps"]  # the counts are the agent's steps


def test_evaluate_repeats_as_the_run_did_and_record_refuses(repeated_run, tmp_path):
    _, run_dir = repeated_run
    result = evaluate(run_dir, episodes=2)
    assert result["action_repeat"] == REPEATS
    with pytest.raises(ValueError, match="--action-repeat 4"):
        record(dataset_id="cartpole/repeated-v0", episodes=1, run_dir=run_dir)


def test_a_video_of_a_repeated_run_films_every_environment_step(repeated_run, tmp_path):
    _, run_dir = repeated_run
    result = evaluate(run_dir, episodes=1, video=str(tmp_path / "episode.gif"))
    # CartPole pays 1 a step, so the return counts the episode's environment steps; the reset adds one frame.
    assert result["frames"] == result["returns"][0] + 1


def test_a_resumed_run_keeps_its_repeat_and_refuses_another(repeated_run):
    _, run_dir = repeated_run
    result = plan(["--resume", run_dir])
    assert result.config.action_repeat == REPEATS
    with pytest.raises(SystemExit) as exit_:
        plan(["--resume", run_dir, "--action-repeat", "2"])
    assert exit_.value.code == 2


def test_a_snapshot_with_a_bad_repeat_is_refused_naming_its_file(repeated_run, tmp_path):
    _, run_dir = repeated_run
    snapshot = load_snapshot(run_dir)
    assert snapshot.action_repeat == REPEATS
    import shutil

    copy = str(tmp_path / "snapshot")
    shutil.copytree(snapshot.path, copy)
    metadata_path = os.path.join(copy, "metadata.json")
    with open(metadata_path) as f:
        metadata = json.load(f)
    with open(metadata_path, "w") as f:
        json.dump({**metadata, "action_repeat": 0}, f)
    with pytest.raises(CheckpointError, match="metadata.json.*action_repeat"):
        load_snapshot(copy)


def test_batched_environments_repeat_each_sub_environment():
    """A vector environment steps its sub-environments as one: with a repeat, each is its own repeating one."""
    config = make_experiment_config(agent="dqn", environment="CartPole-v1", max_num_actor_steps=100, num_envs=3,
                                    action_repeat=2)
    environment = AgentParts(config).actor_environment(0)
    assert isinstance(environment, BatchedEnvironments)
    environment.reset()
    timestep = environment.step(np.zeros(3, np.int64))
    np.testing.assert_array_equal(timestep.reward, [2.0, 2.0, 2.0])
    assert isinstance(AgentParts(config).evaluator_environment(), ActionRepeatWrapper)


@pytest.mark.parametrize("arguments, expected", [
    (["--agent", "ippo", "--env", "mpe/simple_spread_v3", "--action-repeat", "2"], "--action-repeat 1"),
    (["--agent", "ppo", "--env", "gymnax/CartPole-v1", "--launch", "anakin", "--action-repeat", "2"],
     "--action-repeat does not work in mode anakin"),
    (["--agent", "dqn", "--env", "CartPole-v1", "--action-repeat", "0"], "--action-repeat: must be >= 1"),
])
def test_what_cannot_repeat_is_a_parser_line(arguments, expected):
    result = command_line(*arguments)
    assert result.returncode == 2 and expected in result.stderr and "Traceback" not in result.stderr, result.stderr
