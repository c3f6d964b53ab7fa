"""The DeepMind Control Suite by id (`dm_control/<domain>-<task>`): the command line and the Python API take its
tasks with no wrapper of the user's, seeded, in 1,000-step episodes with the suite's discount; an unknown domain or
task is one parser line listing the valid ones; a stack without dm-control names the extra; evaluate's frames."""

import ctypes.util
import os

import numpy as np
import pytest
from dm_env import specs
from stack import require

from acmelike.environments import load_suite, make_control_suite_environment
from launch import make_experiment_config
from launch.cli import packages
from launch.cli.evaluate import FrameRecorder, make_environment
from launch.cli.train import plan
from run_helpers import command_line

require("dm_control")
suite = load_suite()  # MUJOCO_GL chosen for this machine before dm_control's renderer loads
# dm_control 1.0.50 sets an array's shape on every named-index lookup, which numpy 2.5 deprecates.
pytestmark = pytest.mark.filterwarnings("ignore:Setting the shape on a NumPy array:DeprecationWarning")


def test_the_command_line_takes_a_control_suite_id_and_its_preset():
    run = plan(["--agent", "sac", "--env", "dm_control/cartpole-swingup", "--steps", "1000", "--preset", "dmc"])
    assert run.config.environment == "dm_control/cartpole-swingup"
    assert run.config.agent_config.min_replay_size == 5000 and run.config.agent_config.initial_temperature == 0.1
    environment = run.config.environment_factory(0)
    assert environment.observation_spec() == specs.Array((5,), np.float32, name="position[0:3],velocity[3:5]")
    assert environment.action_spec().shape == (1,) and environment.action_spec().dtype == np.float32


@pytest.mark.parametrize("env, problem", [
    ("dm_control/cartpol-swingup", "no domain 'cartpol'"),
    ("dm_control/cartpole-spin", "the domain 'cartpole' has no task 'spin'"),
    ("dm_control/cartpole", "the domain 'cartpole' has no task named"),
])
def test_an_unknown_domain_or_task_is_one_line_listing_the_valid_ones(env, problem, tmp_path):
    run_dir = tmp_path / "run"
    result = command_line("--agent", "sac", "--env", env, "--steps", 10, "--run-dir", run_dir)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    line = [line for line in result.stderr.splitlines() if line.strip()][-1]
    assert f"Unknown Control Suite task '{env}': {problem}" in line
    assert "cartpole: balance, balance_sparse, swingup, swingup_sparse" in line and "walker: stand, walk, run" in line
    assert not os.path.exists(run_dir)


def test_an_unknown_gymnasium_id_points_at_the_control_suites_ids():
    result = command_line("--agent", "sac", "--env", "cartpole-swingup", "--steps", 10)
    assert result.returncode == 2 and "Unknown gymnasium environment 'cartpole-swingup'" in result.stderr
    assert "the DeepMind Control Suite's tasks are dm_control/<domain>-<task>" in result.stderr


def test_a_stack_without_dm_control_names_the_extra(monkeypatch):
    monkeypatch.setattr(packages, "installed", lambda name: name != "dm_control")
    result = command_line("--agent", "sac", "--env", "dm_control/walker-walk", "--steps", 10)
    assert result.returncode == 2
    assert "--env dm_control/walker-walk needs dm-control, which is not installed: pip install -e '.[dmc]'" in (
        result.stderr)


def test_a_task_is_seeded_and_lasts_1000_steps_ending_with_the_suites_discount():
    first = [make_control_suite_environment("dm_control/cartpole-swingup", seed).reset().observation
             for seed in (3, 3, 4)]
    np.testing.assert_array_equal(first[0], first[1])
    assert not np.array_equal(first[0], first[2])
    environment = make_control_suite_environment("dm_control/cartpole-swingup", seed=3)
    environment.reset()
    steps = [environment.step(np.zeros(1, np.float32)) for _ in range(1000)]
    assert [step.last() for step in steps].count(True) == 1 and steps[-1].last()
    assert steps[-1].discount == 1.0 and steps[-1].reward.dtype == np.float32  # a truncation: agents bootstrap
    assert environment.step(np.zeros(1, np.float32)).first()


def test_the_python_api_takes_a_control_suite_id_or_the_suites_own_environment():
    config = make_experiment_config(agent="d4pg", environment="dm_control/walker-walk", max_num_actor_steps=1000)
    environment = config.environment_factory(0)
    assert environment.observation_spec().shape == (24,) and environment.action_spec().shape == (6,)
    assert environment.observation_spec().name == "height[0:1],orientations[1:15],velocity[15:24]"
    # The example: the suite's own environment, a dict of float64 observations, needs no wrapper of yours.
    config = make_experiment_config(
        agent="sac", environment="dm_control/cartpole-swingup", max_num_actor_steps=1000,
        environment_factory=lambda seed: suite.load("cartpole", "swingup", task_kwargs={"random": seed}))
    assert config.environment_factory(0).observation_spec() == specs.Array(
        (5,), np.float32, name="position[0:3],velocity[3:5]")


@pytest.mark.skipif(not (os.environ.get("DISPLAY") or ctypes.util.find_library("EGL")
                         or ctypes.util.find_library("OSMesa")),
                    reason="no display, EGL or OSMesa: MuJoCo cannot render here (acmelike.environments.control_suite)")
def test_evaluates_frame_recorder_renders_the_suites_frames():
    environment, frame = make_environment("dm_control/cartpole-swingup", seed=0, render=True)
    recorder = FrameRecorder(environment, frame)
    recorder.reset()
    recorder.step(np.ones(1, np.float32))
    assert [frame.shape for frame in recorder.frames] == [(240, 320, 3)] * 2
    assert recorder.frames[0].dtype == np.uint8 and recorder.frames[0].std() > 0  # a picture, not a blank
