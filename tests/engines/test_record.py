"""`launch.cli.record`: one policy or a mix of policies (`--policy SOURCE:EPISODES[:EPSILON]`) in one dataset id.

Recording from a snapshot, mixed with random episodes, runs in tests/docs/test_readme_commands.py (the README's
offline commands, in order)."""

import json

import pytest
from run_helpers import command_line
from stack import require

require("minari")

from launch.cli.record import Policy, parse_policy, record_mix  # noqa: E402


@pytest.fixture()
def datasets(tmp_path, monkeypatch):
    monkeypatch.setenv("MINARI_DATASETS_PATH", str(tmp_path / "minari"))
    return tmp_path / "minari"


@pytest.mark.parametrize("text, policy", [
    ("runs/dqn:80", Policy(80, "runs/dqn")),
    ("random:20", Policy(20)),
    ("runs/dqn:50:0.3", Policy(50, "runs/dqn", 0.3)),
    ("C:/runs/x:5", Policy(5, "C:/runs/x")),
])
def test_policy_texts_are_read(text, policy):
    assert parse_policy(text) == policy
    assert parse_policy(policy.text()) == policy


@pytest.mark.parametrize("text, message", [
    ("runs/dqn", "write SOURCE:EPISODES"),
    ("random:x", "write SOURCE:EPISODES"),
    (":5", "write SOURCE:EPISODES"),
    ("random:0", "episodes must be >= 1"),
    ("runs/dqn:5:1.5", r"epsilon must be in \[0, 1\]"),
])
def test_a_wrong_policy_text_says_how_to_write_it(text, message):
    with pytest.raises(ValueError, match=message):
        parse_policy(text)


def test_a_mix_is_one_dataset_with_each_part_in_order(datasets):
    import minari

    result = record_mix(dataset_id="cartpole/mix-v0", policies=[Policy(3), Policy(2, epsilon=0.5)],
                        environment="CartPole-v1", seed=4)
    assert result["episodes"] == 5 and [part["episodes"] for part in result["policies"]] == [3, 2]
    assert [part["policy"] for part in result["policies"]] == ["random:3", "random:2:0.5"]
    dataset = minari.load_dataset("cartpole/mix-v0")
    assert dataset.total_episodes == 5 and dataset.total_steps == result["steps"]
    assert "random:3, random:2:0.5" in dataset.storage.metadata["description"]


def test_the_command_line_mixes_and_refuses_an_existing_id_unless_overwritten(datasets):
    mix = ["--policy", "random:2", "--policy", "random:1", "--env", "CartPole-v1", "--dataset-id", "cartpole/m-v0"]
    first = command_line(*mix, module="launch.cli.record")
    assert first.returncode == 0, first.stderr
    assert json.loads(first.stdout.splitlines()[-1])["episodes"] == 3
    again = command_line(*mix, module="launch.cli.record")
    assert again.returncode == 2 and "exists" in again.stderr and "--overwrite" in again.stderr
    replaced = command_line(*mix[:2], "--env", "CartPole-v1", "--dataset-id", "cartpole/m-v0", "--overwrite",
                            module="launch.cli.record")
    assert replaced.returncode == 0, replaced.stderr
    assert json.loads(replaced.stdout.splitlines()[-1])["episodes"] == 2


@pytest.mark.parametrize("argv, message", [
    (["runs/x", "--policy", "random:2"], "--policy names every part"),
    (["--policy", "random:2", "--episodes", "3"], "--policy names every part"),
    ([], "give either RUN_DIR or --random"),
    (["--policy", "random"], "write SOURCE:EPISODES"),
])
def test_the_command_line_refuses_mixed_up_forms(argv, message, datasets):
    result = command_line(*argv, "--env", "CartPole-v1", "--dataset-id", "cartpole/x-v0", module="launch.cli.record")
    assert result.returncode == 2 and message in result.stderr, result.stderr
