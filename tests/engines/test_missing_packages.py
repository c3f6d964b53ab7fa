"""A mode, environment family or flag whose package is missing is one parser line naming the package and the
install that brings it (exit 2, nothing written), never a traceback part way through a run."""

import os

import pytest

from launch.cli import packages
from tests.run_helpers import command_line

# (the command line's own flags, the module made to look missing, what the message must say)
CASES = [
    (["--launch", "local_mp", "--actors", "2"], "launchpad", "--launch local_mp needs dm-launchpad, which exists only "
                                                             "for Python 3.10 (the classic stack"),
    (["--launch", "local_mt"], "reverb", "--launch local_mt (its replay node) needs dm-reverb"),
    (["--launch", "ray"], "ray", "--launch ray needs ray, which is not installed: pip install -e '.[ray]'"),
    (["--replay", "reverb"], "reverb", "--replay reverb needs dm-reverb, which exists only for Python 3.10"),
    (["--tensorboard"], "tensorboardX", "--tensorboard needs tensorboardX, which is not installed: pip install -e "
                                        "'.[tensorboard]'"),
]


@pytest.mark.parametrize("flags, module, message", CASES, ids=[case[1] + "-" + case[0][0] for case in CASES])
def test_a_missing_package_is_one_line_and_nothing_is_written(flags, module, message, monkeypatch, tmp_path):
    monkeypatch.setattr(packages, "installed", lambda name: name != module)  # only `module` is missing
    run_dir = tmp_path / "run"
    result = command_line("--agent", "dqn", "--env", "CartPole-v1", "--steps", 10, "--run-dir", run_dir, *flags)
    assert result.returncode == 2
    (line,) = [line for line in result.stderr.splitlines() if line.strip()][-1:]
    assert message in line, result.stderr
    assert "Traceback" not in result.stderr and not os.path.exists(run_dir)


@pytest.mark.parametrize("argv, module, message", [
    (["--agent", "dqn", "--env", "gymnax/CartPole-v1", "--launch", "anakin"], "gymnax", "pip install -e '.[anakin]'"),
    (["--agent", "bc", "--env", "CartPole-v1", "--dataset", "cartpole/x-v0"], "minari", "pip install -e '.[offline]'"),
    (["--agent", "ippo", "--env", "mpe/simple_spread_v3"], "mpe2", "pip install -e '.[multiagent]'"),
    (["--agent", "dqn", "--env", "MinAtar/Breakout-v1"], "minatar", "pip install -e '.[minatar]'"),
    (["--agent", "sac", "--env", "HalfCheetah-v5"], "mujoco", "pip install -e '.[mujoco]'"),
], ids=["anakin", "offline", "mpe", "minatar", "mujoco"])
def test_each_environment_family_and_mode_names_its_extra(argv, module, message, monkeypatch):
    monkeypatch.setattr(packages, "installed", lambda name: name != module)  # only `module` is missing
    result = command_line(*argv, "--steps", 10)
    assert result.returncode == 2 and message in result.stderr, result.stderr


def test_on_a_stack_without_launchpad_and_reverb_their_modes_name_the_classic_stack(tmp_path):
    """The real thing, where the stack lacks them (Python 3.12: no wheels); on the classic stack they are there."""
    if packages.installed("launchpad") or packages.installed("reverb"):
        pytest.skip("dm-launchpad and dm-reverb are installed here (the classic stack): nothing is missing")
    for flags in (["--launch", "local_mp"], ["--launch", "local_mt"], ["--replay", "reverb"]):
        result = command_line("--agent", "dqn", "--env", "CartPole-v1", "--run-dir", tmp_path / "run", *flags)
        assert result.returncode == 2 and "exists only for Python 3.10 (the classic stack" in result.stderr
        assert not os.path.exists(tmp_path / "run")
