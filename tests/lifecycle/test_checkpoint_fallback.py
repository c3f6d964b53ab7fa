"""A resume goes on from the newest checkpoint that reads back whole: a truncated or corrupt newer one is skipped
(and set aside, named with its faulty file), and nothing, the logs included, is touched before that is known."""

import csv
import os

import numpy as np
import pytest

from acmelike import core
from acmelike.checkpointing import CheckpointError, Checkpointer, latest_checkpoint, readable_checkpoint


class Arrays(core.Saveable):
    def __init__(self, value: float = 0.0):
        self.value = np.full((64,), value, np.float32)

    def save(self):
        return {"w": self.value}

    def restore(self, state):
        self.value = np.asarray(state["w"])


class Counts(core.Saveable):
    def __init__(self):
        self.counts = {}

    def save(self):
        return dict(self.counts)

    def restore(self, state):
        self.counts = dict(state)


def _files(path, under):
    found = []
    for root, _, names in os.walk(os.path.join(path, under)):
        found += [os.path.join(root, name) for name in names if os.path.getsize(os.path.join(root, name)) > 8]
    return sorted(found)


def _two_checkpoints(directory, metadata=None, logs=(None, None)):
    counts, arrays = Counts(), Arrays(1.0)
    checkpointer = Checkpointer(directory, {"learner": arrays, "counter": counts}, metadata=metadata)
    paths = []
    for step, log_rows in zip((1000, 2000), logs):
        counts.counts = {"actor_steps": step}
        arrays.value = np.full((64,), step, np.float32)
        paths.append(checkpointer.save(step, **({"logs": log_rows} if log_rows else {})))
    return paths


def test_a_truncated_newest_checkpoint_is_skipped_set_aside_and_named(tmp_path):
    older, newest = _two_checkpoints(str(tmp_path))
    damaged = _files(newest, "arrays")[0]
    with open(damaged, "r+b") as f:
        f.truncate(os.path.getsize(damaged) // 2)
    assert latest_checkpoint(str(tmp_path)) == older  # sizes alone already tell it is incomplete

    path, skipped = readable_checkpoint(str(tmp_path))
    assert path == older
    assert len(skipped) == 1 and newest in skipped[0] and damaged in skipped[0] and "truncated" in skipped[0]
    assert not os.path.exists(newest) and os.path.isdir(newest + ".unreadable")  # kept for inspection
    restored = Arrays()
    assert Checkpointer(str(tmp_path), {"learner": restored}).restore(path, names=["learner"]) == 1000
    assert restored.value[0] == 1000


def test_a_corrupt_replay_of_the_same_size_is_found_by_its_crc_and_named(tmp_path):
    class Replay:  # a replay client whose checkpoint is a directory of its own files, as Reverb's is
        def checkpoint(self):
            directory = tmp_path / f"replay-{len(os.listdir(tmp_path))}"
            directory.mkdir()
            (directory / "chunks.tfrecord").write_bytes(bytes(range(256)) * 4)
            return str(directory)

        def server_info(self):
            return {}

    checkpointer = Checkpointer(str(tmp_path / "checkpoints"), {"counter": Counts()}, replay_client=Replay())
    older, newest = checkpointer.save(1), checkpointer.save(2)
    chunks = os.path.join(newest, "replay", "chunks.tfrecord")
    data = bytearray(open(chunks, "rb").read())
    data[100] ^= 0xFF  # one flipped byte: every size still matches
    with open(chunks, "wb") as f:
        f.write(data)
    assert latest_checkpoint(str(tmp_path / "checkpoints")) == newest
    path, skipped = readable_checkpoint(str(tmp_path / "checkpoints"))
    assert path == older and chunks in skipped[0] and "corrupt" in skipped[0]


def test_when_no_checkpoint_reads_the_error_names_each_and_nothing_moves(tmp_path):
    paths = _two_checkpoints(str(tmp_path))
    for path in paths:
        os.remove(os.path.join(path, "counter.json"))
    with pytest.raises(CheckpointError, match="No checkpoint in .* can be read") as raised:
        readable_checkpoint(str(tmp_path))
    assert all(os.path.join(path, "counter.json") in str(raised.value) for path in paths)
    assert all(os.path.isdir(path) for path in paths)


def _actor_log(run_dir, rows):
    with open(os.path.join(run_dir, "actor.csv"), "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=["actor_steps", "episode_return"])
        writer.writeheader()
        writer.writerows({"actor_steps": 20 * (i + 1), "episode_return": 1.0} for i in range(rows))


def _rows(run_dir):
    with open(os.path.join(run_dir, "actor.csv"), newline="") as f:
        return len(list(csv.DictReader(f)))


@pytest.mark.parametrize("readable_older", [True, False], ids=["falls-back", "none-readable"])
def test_a_resume_reads_the_checkpoint_before_it_cuts_the_logs(readable_older, tmp_path, capsys):
    from launch import make_experiment_config
    from launch.lifecycle.checkpoints import RunLifecycle
    from launch.lifecycle.run_directory import CHECKPOINTS, RunOptions, run_identity

    run_dir = str(tmp_path)
    config = make_experiment_config(agent="dqn", environment="CartPole-v1", max_num_actor_steps=5000, run_dir=run_dir)
    older, newest = _two_checkpoints(os.path.join(run_dir, CHECKPOINTS), metadata=run_identity(config),
                                     logs=({"actor.csv": 50}, {"actor.csv": 100}))
    _actor_log(run_dir, 180)
    for path in ([newest] if readable_older else [older, newest]):
        damaged = _files(path, "arrays")[0]
        with open(damaged, "r+b") as f:
            f.truncate(3)

    options = RunOptions(checkpoint_every_minutes=1.0, resume=True)
    if not readable_older:
        with pytest.raises(CheckpointError, match="No checkpoint in .* can be read"):
            RunLifecycle(config, options)
        assert _rows(run_dir) == 180  # the logs are as the stopped run left them
        return
    lifecycle = RunLifecycle(config, options)
    assert lifecycle.resume_step == 1000
    assert _rows(run_dir) == 50  # cut back to the checkpoint it goes on from, not to the skipped one
    errors = capsys.readouterr().err
    assert f"skipped checkpoint {newest}" in errors and f"going on from {older}" in errors


def test_the_resume_check_reads_the_identity_of_the_checkpoint_it_will_go_on_from(tmp_path):
    """A newest checkpoint whose metadata is damaged (every size intact) does not refuse `--resume` at the command
    line: the identity checked is the newest readable checkpoint's, the one the run then falls back to."""
    from launch import make_experiment_config
    from launch.lifecycle.run_directory import CHECKPOINTS, RunOptions, check_run_directory, run_identity

    run_dir = str(tmp_path)
    config = make_experiment_config(agent="dqn", environment="CartPole-v1", max_num_actor_steps=5000, run_dir=run_dir)
    older, newest = _two_checkpoints(os.path.join(run_dir, CHECKPOINTS), metadata=run_identity(config))
    metadata = os.path.join(newest, "metadata.json")
    text = open(metadata).read()
    with open(metadata, "w") as f:
        f.write("#" * len(text))  # the same size: only reading it finds the damage
    check_run_directory(config, RunOptions(resume=True))  # the older checkpoint's identity: this run's

    other = make_experiment_config(agent="dqn", environment="CartPole-v1", max_num_actor_steps=5000, run_dir=run_dir,
                                   seed=7)
    with pytest.raises(CheckpointError, match="seed"):
        check_run_directory(other, RunOptions(resume=True))  # still compared, with the readable one
    with open(os.path.join(older, "metadata.json"), "w") as f:
        f.write("#")
    with pytest.raises(CheckpointError, match=r"No checkpoint in .* can be read: .*metadata.json"):
        check_run_directory(config, RunOptions(resume=True))
