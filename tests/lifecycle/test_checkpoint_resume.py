"""Resume: a single-process run killed with SIGKILL mid-way continues from its checkpoint to its full budget."""

import json
import os
import signal
import subprocess
import time

import pytest

from tests.stack import require

from tests.run_helpers import (REPO, SMALL_DQN, command_line, csv_column, environment, launch_command,  # noqa
                               learned_checkpoint, newest_checkpoint, summary_line)
from tests.tensorboard_events import read_scalars, session_starts  # noqa: E402

# Long enough that the kill, after the first checkpoint with learner steps (checkpoints come 1.8 s apart), lands
# mid-run (the fixture says if not): the default local replay runs about 1.2k steps/s here, 3x that on a fast machine.
STEPS = 24_000


@pytest.fixture(scope="module")
def killed_and_resumed(tmp_path_factory):
    run_dir = str(tmp_path_factory.mktemp("resume") / "run")
    process = subprocess.Popen(
        launch_command("--agent", "dqn", "--env", "CartPole-v1", "--steps", str(STEPS), "--run-dir", run_dir,
                       "--checkpoint-every", "0.03", "--tensorboard", *SMALL_DQN),
        cwd=REPO, env=environment(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.time() + 240
        while not learned_checkpoint(run_dir) and process.poll() is None and time.time() < deadline:
            time.sleep(0.2)
        time.sleep(1.0)  # into the next stretch: the kill loses steps taken after the checkpoint
    finally:
        process.send_signal(signal.SIGKILL)
        process.wait()
    assert process.returncode == -signal.SIGKILL, "the run ended before it could be killed: raise STEPS"
    checkpoint = newest_checkpoint(run_dir)
    with open(os.path.join(checkpoint, "metadata.json")) as f:
        metadata = json.load(f)
    with open(os.path.join(checkpoint, "counter.json")) as f:
        counts = json.load(f)
    resumed = command_line("--resume", run_dir)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    with open(os.path.join(run_dir, "resumed.json")) as f:
        restored = json.load(f)
    return dict(run_dir=run_dir, metadata=metadata, counts=counts, restored=restored,
                summary=summary_line(resumed.stdout))


def test_resumed_run_ends_at_its_budget(killed_and_resumed):
    assert killed_and_resumed["summary"]["env_steps"] >= STEPS
    assert killed_and_resumed["metadata"]["step"] < STEPS


def test_counters_learner_and_replay_continue_from_the_checkpoint(killed_and_resumed):
    restored, counts, metadata = (killed_and_resumed[k] for k in ("restored", "counts", "metadata"))
    assert restored["step"] == metadata["step"] == counts["actor_steps"]
    assert restored["counts"] == counts
    assert restored["learner_state_steps"] == counts["learner_sgd_steps"] > 0  # the learner's own step counter
    assert restored["replay_sizes"] == metadata["replay_sizes"]
    assert metadata["replay_sizes"]["priority_table"] > 0


def test_counters_never_go_backwards_in_the_logs(killed_and_resumed):
    run_dir = killed_and_resumed["run_dir"]
    for name, column in (("actor.csv", "actor_steps"), ("learner.csv", "learner_steps")):
        values = csv_column(os.path.join(run_dir, name), column)
        assert values and all(b >= a for a, b in zip(values, values[1:])), name
    assert csv_column(os.path.join(run_dir, "actor.csv"), "actor_steps")[-1] >= STEPS


def test_tensorboard_shows_one_timeline_through_the_resume(killed_and_resumed):
    run_dir, counts = killed_and_resumed["run_dir"], killed_and_resumed["counts"]
    assert counts["actor_steps"] + 1 in session_starts(os.path.join(run_dir, "tensorboard", "actor"))
    scalars = read_scalars(os.path.join(run_dir, "tensorboard"))  # as TensorBoard shows them
    for tag in ("actor/episode_return", "learner/loss"):
        steps = [step for step, _ in scalars[tag]]
        assert steps and all(b > a for a, b in zip(steps, steps[1:])), tag


def test_resume_with_another_agent_is_refused_and_leaves_the_run_alone(killed_and_resumed):
    run_dir = killed_and_resumed["run_dir"]
    before = {name: os.path.getmtime(os.path.join(run_dir, name)) for name in os.listdir(run_dir)}
    result = command_line("--resume", run_dir, "--agent", "ppo")
    assert result.returncode != 0
    assert "config.json" in result.stderr and "'dqn'" in result.stderr
    other = command_line("--resume", run_dir, "--config", "learning_rate=0.5")
    assert other.returncode != 0 and "belongs to a different run" in other.stderr and "checkpoints" in other.stderr
    fresh = command_line("--agent", "dqn", "--env", "CartPole-v1", "--run-dir", run_dir, "--steps", "100")
    assert fresh.returncode != 0 and "--resume" in fresh.stderr
    after = {name: os.path.getmtime(os.path.join(run_dir, name)) for name in os.listdir(run_dir)}
    assert after == before


def test_resume_of_a_directory_without_a_run_names_the_file(tmp_path):
    result = command_line("--resume", str(tmp_path))
    assert result.returncode != 0 and os.path.join(str(tmp_path), "config.json") in result.stderr


def test_a_run_on_the_local_replay_resumes_with_its_replay(tmp_path):
    """--replay local keeps its replay in each checkpoint in its own format: a resumed run starts with the
    items, priorities and sampler state it saved, and continues to its new budget."""
    run_dir = str(tmp_path / "run")
    first = command_line("--agent", "dqn", "--env", "CartPole-v1", "--steps", "1500", "--seed", "2", "--replay", "local",
                         "--run-dir", run_dir, "--checkpoint-every", "10", *SMALL_DQN)
    assert first.returncode == 0, first.stderr[-3000:]
    checkpoint = newest_checkpoint(run_dir)
    with open(os.path.join(checkpoint, "metadata.json")) as f:
        saved_sizes = json.load(f)["replay_sizes"]
    assert saved_sizes["priority_table"] > 0 and os.path.exists(os.path.join(checkpoint, "replay", "local_replay.npz"))
    resumed = command_line("--resume", run_dir, "--steps", "3000")
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    with open(os.path.join(run_dir, "resumed.json")) as f:
        assert json.load(f)["replay_sizes"] == saved_sizes
    summary = summary_line(resumed.stdout)
    assert summary["env_steps"] >= 3000 and summary["learner_steps"] > 0, summary
    refused = command_line("--resume", run_dir, "--replay", "reverb")
    assert refused.returncode == 2 and "--replay" in refused.stderr
