"""Distributed resume: a local_mp program killed mid-way goes on from its checkpoint when resumed.

A long test (`pytest -m long`): 9-11 minutes of a loaded 2-core machine. CI has the single-process kill and
resume (tests/test_checkpoint_resume.py), and every local_mt smoke run writes its nodes' checkpoints.

The kill is SIGKILL to the launcher's whole process group: a crash or a preempted machine takes every node down
at once, and nothing is saved on the way out. (The node processes run in process groups of their own and die
with the launcher, PR_SET_PDEATHSIG: see launchpad_engine._NodeProcess.) The resumed program must then restore
each node's part from the latest periodic checkpoint.
"""

import json
import os
import signal
import time

import pytest
from program_launcher import Launcher
from stack import long_test, require

pytestmark = pytest.mark.classic
require("launchpad")
pytestmark = long_test

from run_helpers import SMALL_DQN, command_line, csv_column, learned_checkpoint, newest_checkpoint  # noqa: E402
from tensorboard_events import read_scalars, session_starts  # noqa: E402

STEPS = 12_000  # the kill lands after the first checkpoint; the resumed program runs the rest
ARGS = ("--agent", "dqn", "--env", "CartPole-v1", "--launch", "local_mp", "--actors", "1", "--steps", STEPS,
        "--checkpoint-every", "0.05", "--tensorboard", *SMALL_DQN)


def _max_step(scalars, tag):
    return max((step for step, _ in scalars.get(tag, [])), default=-1)


@pytest.fixture(scope="module")
def killed_and_resumed(tmp_path_factory):
    run_dir = str(tmp_path_factory.mktemp("mp_resume") / "run")
    events = os.path.join(run_dir, "tensorboard", "actor_0")
    first = Launcher(*ARGS, run_dir=run_dir, command_line=True, own_process_group=True)
    started = time.time()
    try:
        # Killed once a checkpoint holds learner steps and the actor's events past it are on disk, so the killed
        # program leaves a timeline (CSV rows, TensorBoard events) that the resumed one must replace.
        # Node start-up alone took 5 minutes on a loaded machine.
        while first.process.poll() is None and time.time() - started < 600:
            latest = learned_checkpoint(run_dir)
            if latest and _max_step(read_scalars(events, purge=False), "actor_0/actor_steps") > int(
                    os.path.basename(latest)):
                break
            time.sleep(0.3)
    finally:
        first._record()  # the nodes, alive since the start, to check after the kill
        first.signal_group(signal.SIGKILL)
        first.process.wait()
    assert first.process.returncode == -signal.SIGKILL, "the program ended before it could be killed: raise STEPS"
    killed_left = first.left_behind()
    checkpoint = newest_checkpoint(run_dir)
    assert checkpoint, f"no checkpoint in {run_dir} when the program was killed (it had run {time.time() - started:.0f} s)"
    with open(os.path.join(checkpoint, "metadata.json")) as f:
        metadata = json.load(f)
    with open(os.path.join(checkpoint, "counter.json")) as f:
        counts = json.load(f)
    raw_events = read_scalars(events, purge=False)
    resumed = Launcher("--resume", run_dir, run_dir=run_dir, command_line=True, separate_stderr=True)
    code = resumed.wait(timeout=400)
    assert code == 0, (resumed.output + resumed.errors)[-5000:]
    with open(os.path.join(run_dir, "resumed.json")) as f:
        restored = json.load(f)
    return dict(run_dir=run_dir, metadata=metadata, counts=counts, restored=restored, raw_events=raw_events,
                summary=json.loads(resumed.output.strip().splitlines()[-1]), killed_left=killed_left,
                resumed_left=resumed.left_behind(), wall=time.time() - started)


def test_resumed_program_ends_at_its_budget_and_leaves_nothing(killed_and_resumed):
    summary = killed_and_resumed["summary"]
    assert summary["env_steps"] >= STEPS and summary["launch"] == "local_mp"
    assert summary["interrupted"] is False
    assert killed_and_resumed["metadata"]["step"] < STEPS
    # The steps limiter had the learner checkpoint the run before it ended the program.
    assert int(os.path.basename(newest_checkpoint(killed_and_resumed["run_dir"]))) >= STEPS
    assert killed_and_resumed["killed_left"] == [] and killed_and_resumed["resumed_left"] == []
    print(f"kill + resume wall time: {killed_and_resumed['wall']:.0f} s")


def test_counter_learner_and_replay_restart_from_the_checkpoint(killed_and_resumed):
    restored, counts, metadata = (killed_and_resumed[k] for k in ("restored", "counts", "metadata"))
    assert restored["step"] == metadata["step"] == counts["actor_steps"]
    assert restored["counts"] == counts  # the counter node's counts, before any node counted on
    assert restored["learner_state_steps"] == counts["learner_sgd_steps"] > 0
    assert restored["replay_sizes"] == metadata["replay_sizes"]  # read from the replay checkpoint itself
    assert metadata["replay_sizes"]["priority_table"] > 0


def test_logs_carry_on_without_going_backwards(killed_and_resumed):
    run_dir, counts = killed_and_resumed["run_dir"], killed_and_resumed["counts"]
    for name, column in (("actor_0.csv", "actor_steps"), ("learner.csv", "learner_steps")):
        values = csv_column(os.path.join(run_dir, name), column)
        assert all(b >= a for a, b in zip(values, values[1:])), name
        assert values[0] <= counts[column] < values[-1], name  # rows from before the checkpoint are kept


def test_tensorboard_hides_what_the_killed_program_logged_after_its_checkpoint(killed_and_resumed):
    run_dir, counts = killed_and_resumed["run_dir"], killed_and_resumed["counts"]
    raw = killed_and_resumed["raw_events"]["actor_0/actor_steps"]
    assert max(step for step, _ in raw) > counts["actor_steps"]  # the killed program's lost timeline is on disk
    assert counts["actor_steps"] + 1 in session_starts(os.path.join(run_dir, "tensorboard", "actor_0"))
    scalars = read_scalars(os.path.join(run_dir, "tensorboard"))
    for tag in ("actor_0/episode_return", "learner/loss"):
        steps = [step for step, _ in scalars[tag]]
        assert all(b > a for a, b in zip(steps, steps[1:])), tag  # as TensorBoard shows it: no step twice
    assert _max_step(scalars, "actor_0/actor_steps") >= STEPS - 600


def test_resume_with_another_config_is_refused_and_leaves_the_run_alone(killed_and_resumed):
    run_dir = killed_and_resumed["run_dir"]
    before = {name: os.path.getmtime(os.path.join(run_dir, name)) for name in os.listdir(run_dir)}
    result = command_line("--resume", run_dir, "--config", "learning_rate=0.5")
    assert result.returncode == 2 and "belongs to a different run" in result.stderr, result.stderr[-2000:]
    assert {name: os.path.getmtime(os.path.join(run_dir, name)) for name in os.listdir(run_dir)} == before
