"""Snapshots of a finished run: load without the training code, replay the evaluator's figures, render a video;
and the run's TensorBoard event files."""

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from acmelike.checkpointing import CheckpointError
from acmelike.snapshots import environment_spec_from_json, environment_spec_to_json
from launch.lifecycle.snapshots import load_snapshot
from acmelike.specs import EnvironmentSpec
from dm_env import specs
from tests.stack import require

from tests.run_helpers import REPO, SMALL_DQN, command_line, csv_column, environment  # noqa: E402

STEPS, EVALUATION_EPISODES = 2500, 5


@pytest.fixture(scope="module")
def trained_run(tmp_path_factory):
    """A short DQN run whose only evaluation round comes after its last training episode (so the final
    snapshot holds exactly the parameters the evaluator ran), with TensorBoard on."""
    run_dir = str(tmp_path_factory.mktemp("snapshot") / "run")
    # In this process: the runner closes its loggers at the end, so the TensorBoard events are on disk after it.
    result = command_line("--agent", "dqn", "--env", "CartPole-v1", "--steps", STEPS, "--eval-every", STEPS,
                          "--run-dir", run_dir, "--tensorboard", *SMALL_DQN)
    assert result.returncode == 0, result.stderr[-3000:]
    return run_dir


def test_snapshot_loads_without_the_training_code_path(trained_run):
    script = textwrap.dedent(
        f"""
        import sys
        from launch import load_actor
        actor = load_actor({trained_run!r})
        action = actor.select_action(__import__("numpy").zeros(4, "float32"))
        assert int(action) in (0, 1)
        # No replay, Launchpad or runner: the agent's package is imported (its builder), nothing is built from it.
        heavy = ("reverb", "launchpad", "tensorflow", "acmelike.replay", "launch.engines", "launch.experiments")
        loaded = [m for m in heavy if m in sys.modules]
        assert not loaded, loaded
        """
    )
    result = subprocess.run([sys.executable, "-c", script], cwd=REPO, env=environment(), capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-3000:]


def test_greedy_return_equals_the_evaluators_last_figures(trained_run):
    from launch.experiments.parts import evaluator_seed
    from launch.cli.evaluate import evaluate

    with open(os.path.join(trained_run, "config.json")) as f:
        seed = json.load(f)["seed"]

    class Seed:  # evaluator_seed reads the experiment's seed only
        pass

    config = Seed()
    config.seed = seed
    evaluator_averages = csv_column(os.path.join(trained_run, "evaluator.csv"), "average_return")
    assert len(evaluator_averages) == 1  # one evaluation round of EVALUATION_EPISODES episodes, at the end
    # The evaluator's environment, seeded as in training, and a greedy policy: the same episodes, exactly.
    result = evaluate(trained_run, episodes=EVALUATION_EPISODES, seed=evaluator_seed(config))
    assert result["step"] >= STEPS and len(result["returns"]) == EVALUATION_EPISODES
    np.testing.assert_allclose(np.mean(result["returns"]), evaluator_averages[-1])


def test_video_is_a_gif_with_the_environments_frames(trained_run, tmp_path):
    from PIL import Image

    video = str(tmp_path / "episode.gif")
    result = command_line(trained_run, "--episodes", "2", "--video", video, module="launch.cli.evaluate")
    assert result.returncode == 0, result.stderr[-3000:]
    summary = json.loads(result.stdout.strip().splitlines()[-1])
    with Image.open(video) as gif:
        assert summary["frames"] == summary["returns"][0] + 1  # reset + one per step of the first episode
        assert 2 <= gif.n_frames <= summary["frames"]  # Pillow merges identical consecutive frames
        assert (gif.size[1], gif.size[0], 3) == tuple(summary["frame_shape"]) == (400, 600, 3)  # CartPole's render


def test_runner_writes_tensorboard_scalars(trained_run):
    from tests.tensorboard_events import read_scalars

    scalars = read_scalars(os.path.join(trained_run, "tensorboard"))
    for tag in ("actor/episode_return", "actor/steps_per_second", "learner/loss", "evaluator/average_return"):
        assert scalars.get(tag), (tag, sorted(scalars))
    returns = csv_column(os.path.join(trained_run, "actor.csv"), "episode_return")
    assert [value for _, value in scalars["actor/episode_return"]] == pytest.approx(returns)
    steps = [step for step, _ in scalars["actor/episode_return"]]
    assert steps == sorted(steps) and steps[-1] >= STEPS  # x-axis: actor steps


def test_missing_and_corrupt_snapshots_name_the_file(trained_run, tmp_path):
    with pytest.raises(CheckpointError, match=f"No snapshot in {tmp_path}"):
        load_snapshot(str(tmp_path))
    result = command_line(str(tmp_path / "nowhere"), module="launch.cli.evaluate")
    assert result.returncode != 0 and "nowhere does not exist" in result.stderr

    import shutil

    copy = str(tmp_path / "copy")
    shutil.copytree(os.path.join(trained_run, "snapshots"), copy)
    (snapshot,) = os.listdir(copy)
    with open(os.path.join(copy, snapshot, "metadata.json"), "w") as f:
        f.write("{")
    with pytest.raises(CheckpointError, match=f"{snapshot}/metadata.json is truncated or altered"):
        load_snapshot(copy)


def test_snapshot_of_another_environment_is_refused(trained_run):
    from launch.cli.evaluate import evaluate

    with pytest.raises(ValueError, match="was trained on observations .* but Acrobot-v1 has"):
        evaluate(trained_run, episodes=1, environment="Acrobot-v1")


def test_environment_specs_round_trip_through_json():
    spec = EnvironmentSpec(
        observations={"pixels": specs.Array((2, 3), np.float32, "pixels"),
                      "state": specs.BoundedArray((2,), np.float32, [-1, -2], [1, 2], "state")},
        actions=specs.DiscreteArray(3, np.int32, name="action"),
        rewards=specs.Array((), np.float32, "reward"),
        discounts=specs.BoundedArray((), np.float32, 0.0, 1.0, "discount"),
    )
    restored = environment_spec_from_json(json.loads(json.dumps(environment_spec_to_json(spec))))
    assert repr(restored) == repr(spec)


def test_a_hand_built_experiment_config_snapshots_and_evaluates(tmp_path):
    """An ExperimentConfig built by hand (no command line, no make_experiment_config) with a run directory: it
    trains, its final snapshot names the agent by its registry name, and `launch.cli.evaluate` loads it."""
    import functools

    from acmelike.wrappers import make_gymnasium_environment
    from agents.dqn import DQNBuilder, DQNConfig, make_networks
    from launch import ExperimentConfig, run_single_process
    from launch.cli.evaluate import evaluate

    agent_config = DQNConfig(hidden_sizes=(16,), min_replay_size=100, batch_size=16)
    config = ExperimentConfig(
        builder=DQNBuilder(agent_config),
        environment_factory=functools.partial(make_gymnasium_environment, "CartPole-v1"),
        network_factory=functools.partial(make_networks, config=agent_config),
        max_num_actor_steps=600,
        agent="dqn",
        environment="CartPole-v1",
        run_dir=str(tmp_path / "run"),
    )
    summary = run_single_process(config)
    assert summary["env_steps"] >= 600 and summary["learner_steps"] > 0
    snapshot = load_snapshot(str(tmp_path / "run"))
    assert snapshot.agent == "dqn" and snapshot.config == agent_config
    result = evaluate(str(tmp_path / "run"), episodes=2)
    assert len(result["returns"]) == 2


def test_a_hand_built_experiment_config_that_cannot_snapshot_is_told_at_construction(tmp_path):
    import functools

    from acmelike.wrappers import make_gymnasium_environment
    from agents.dqn import DQNBuilder, DQNConfig, make_networks
    from launch import ExperimentConfig

    def config(**changes):
        agent_config = DQNConfig()
        fields = dict(builder=DQNBuilder(agent_config),
                      environment_factory=functools.partial(make_gymnasium_environment, "CartPole-v1"),
                      network_factory=functools.partial(make_networks, config=agent_config), max_num_actor_steps=10)
        return ExperimentConfig(**{**fields, **changes})

    config()  # without a run directory nothing is written, and the default name is fine
    with pytest.raises(ValueError, match=r"agent.*registered.*dqn"):
        config(run_dir=str(tmp_path))  # agent "agent": its snapshots could not be loaded
    with pytest.raises(ValueError, match=r"agent 'sac'.*SACConfig.*DQNConfig"):
        config(run_dir=str(tmp_path), agent="sac")
    assert not os.listdir(tmp_path)  # refused before anything was written
