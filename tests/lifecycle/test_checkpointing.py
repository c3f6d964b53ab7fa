"""Checkpointer: round trips of array and JSON states, atomic saves (even under SIGKILL), clear errors."""

import os
import signal
import subprocess
import sys
import textwrap
import time
from typing import NamedTuple

import jax
import numpy as np
import optax
import pytest

from acmelike import core
from acmelike.checkpointing import CheckpointError, Checkpointer, latest_checkpoint, list_checkpoints, read_metadata
from acmelike.counting import Counter


class TrainingState(NamedTuple):
    params: dict
    opt_state: tuple
    steps: np.ndarray


class ArrayState(core.Saveable):
    """A learner-like object: a NamedTuple of arrays with an optax state inside."""

    def __init__(self, value: float):
        params = {"w": np.full((3, 2), value, np.float32)}
        self.state = TrainingState(params, optax.adam(1e-3).init(params), np.asarray(int(value), np.int32))

    def save(self):
        return jax.device_get(self.state)

    def restore(self, state):
        self.state = state


class ListState(core.Saveable):
    def __init__(self):
        self.values = []

    def save(self):
        return {"values": list(self.values)}

    def restore(self, state):
        self.values = list(state["values"])


def test_round_trip_of_array_json_and_counter_states(tmp_path):
    learner, tracker, counter = ArrayState(1.0), ListState(), Counter()
    counter.increment(actor_steps=10, episodes=2)
    tracker.values = [1.0, 2.5]
    checkpointer = Checkpointer(str(tmp_path), {"learner": learner, "tracker": tracker, "counter": counter},
                                metadata={"agent": "dqn"})
    path = checkpointer.save(10)
    assert sorted(os.listdir(path)) == ["arrays", "counter.json", "manifest.json", "metadata.json", "tracker.json"]

    restored_learner, restored_tracker, restored_counter = ArrayState(0.0), ListState(), Counter()
    step = Checkpointer(str(tmp_path), {"learner": restored_learner, "tracker": restored_tracker,
                                        "counter": restored_counter}, metadata={"agent": "dqn"}).restore()
    assert step == 10
    assert isinstance(restored_learner.state, TrainingState)
    jax.tree_util.tree_map(np.testing.assert_array_equal, restored_learner.state, learner.state)
    assert int(restored_learner.state.steps) == 1
    assert restored_tracker.values == [1.0, 2.5]
    assert restored_counter.get_counts() == {"actor_steps": 10, "episodes": 2}
    assert restored_counter.increment(actor_steps=5)["actor_steps"] == 15  # counts on, never backwards


def test_a_relative_directory_saves_and_restores(tmp_path, monkeypatch):
    # Run directories are often relative (`--run-dir runs/x`, `make demo`); orbax takes absolute paths only.
    monkeypatch.chdir(tmp_path)
    learner = ArrayState(3.0)
    Checkpointer(os.path.join("runs", "x"), {"learner": learner}).save(7)
    restored = ArrayState(0.0)
    assert Checkpointer(os.path.join("runs", "x"), {"learner": restored}).restore() == 7
    jax.tree_util.tree_map(np.testing.assert_array_equal, restored.state, learner.state)


def test_keeps_the_newest_and_save_if_due_follows_the_clock(tmp_path):
    now = [0.0]
    state = ArrayState(0.0)
    checkpointer = Checkpointer(str(tmp_path), {"s": state}, every_minutes=1.0, max_to_keep=2, clock=lambda: now[0])
    assert checkpointer.save_if_due(1) is None
    for step in (2, 3, 4):
        now[0] += 61.0
        assert checkpointer.save_if_due(step) is not None
    assert [os.path.basename(p) for p in list_checkpoints(str(tmp_path))] == ["000000000003", "000000000004"]


def test_interrupted_save_leaves_the_previous_checkpoint(tmp_path, monkeypatch):
    state = ArrayState(1.0)
    checkpointer = Checkpointer(str(tmp_path), {"s": state, "t": ListState()})
    checkpointer.save(1)

    class Crash(Exception):
        pass

    def crash(*args, **kwargs):
        raise Crash()

    monkeypatch.setattr("acmelike.checkpointing._write_json", crash)  # dies after the arrays are written
    state.state = ArrayState(2.0).state
    with pytest.raises(Crash):
        checkpointer.save(2)
    monkeypatch.undo()
    assert os.path.isdir(os.path.join(tmp_path, "000000000002.tmp"))
    assert latest_checkpoint(str(tmp_path)).endswith("000000000001")
    fresh = ArrayState(0.0)
    assert Checkpointer(str(tmp_path), {"s": fresh, "t": ListState()}).restore() == 1
    assert float(fresh.state.params["w"][0, 0]) == 1.0
    assert not os.path.exists(os.path.join(tmp_path, "000000000002.tmp"))  # cleaned when the directory reopens


_SAVER = textwrap.dedent(
    """
    import sys, numpy as np
    from acmelike import core
    from acmelike.checkpointing import Checkpointer

    class Big(core.Saveable):
        value = 0
        def save(self):
            return {"x": np.full((4_000_000,), self.value, np.float32)}  # 16 MB: a save takes a while
        def restore(self, state):
            pass

    big = Big()
    checkpointer = Checkpointer(sys.argv[1], {"big": big})
    step = 0
    while True:
        step += 1
        big.value = step
        checkpointer.save(step)
        print(step, flush=True)
    """
)


def test_sigkill_during_saves_leaves_a_loadable_checkpoint(tmp_path):
    """A process saving in a loop is killed with SIGKILL at a random moment: the latest checkpoint is whole."""
    directory = str(tmp_path / "checkpoints")
    process = subprocess.Popen([sys.executable, "-c", _SAVER, directory], stdout=subprocess.PIPE, text=True,
                               env={**os.environ, "PYTHONPATH": os.getcwd()})
    try:
        for _ in range(3):  # a few complete saves, then a kill somewhere inside the next ones
            assert process.stdout.readline(), "the saving process died"
        time.sleep(np.random.default_rng().uniform(0.0, 0.5))
    finally:
        process.send_signal(signal.SIGKILL)
        process.wait()

    class Reader(core.Saveable):
        def save(self):
            return {"x": np.zeros((4_000_000,), np.float32)}

        def restore(self, state):
            self.state = state

    reader = Reader()
    step = Checkpointer(directory, {"big": reader}).restore()
    assert step >= 3
    assert np.all(reader.state["x"] == step)  # the arrays belong to the step the metadata names


def test_missing_and_corrupt_checkpoints_name_the_file(tmp_path):
    with pytest.raises(CheckpointError, match="No complete checkpoint in"):
        Checkpointer(str(tmp_path), {"s": ArrayState(0.0)}).restore()
    checkpointer = Checkpointer(str(tmp_path), {"s": ArrayState(1.0), "t": ListState()})
    path = checkpointer.save(5)

    with open(os.path.join(path, "t.json"), "w") as f:
        f.write("{not json")
    with pytest.raises(CheckpointError, match=r"t\.json is truncated or altered"):
        checkpointer.restore()

    os.remove(os.path.join(path, "metadata.json"))
    with pytest.raises(CheckpointError, match=r"metadata\.json is missing"):
        checkpointer.restore()


def test_corrupt_arrays_name_the_checkpoint(tmp_path):
    path = Checkpointer(str(tmp_path), {"s": ArrayState(1.0)}).save(5)
    for root, _, files in os.walk(os.path.join(path, "arrays")):
        for name in files:
            with open(os.path.join(root, name), "wb") as f:
                f.write(b"garbage")
    with pytest.raises(CheckpointError, match=r"000000000005/arrays/.* is truncated or altered"):
        Checkpointer(str(tmp_path), {"s": ArrayState(0.0)}).restore()


def test_a_checkpoint_of_another_run_is_refused_and_left_alone(tmp_path):
    path = Checkpointer(str(tmp_path), {"s": ArrayState(1.0)}, metadata={"agent": "dqn", "seed": 0}).save(5)
    before = sorted(os.listdir(path))
    other = ArrayState(0.0)
    with pytest.raises(CheckpointError, match=r"000000000005 belongs to a different run \(agent: checkpoint has "
                                              r"'dqn', this run has 'ppo'\)"):
        Checkpointer(str(tmp_path), {"s": other}, metadata={"agent": "ppo", "seed": 0}).restore()
    assert float(other.state.params["w"][0, 0]) == 0.0
    assert sorted(os.listdir(path)) == before and read_metadata(path)["agent"] == "dqn"


def test_objects_must_be_saveable(tmp_path):
    with pytest.raises(TypeError, match="'learner' is a object, not an acmelike.core.Saveable"):
        Checkpointer(str(tmp_path), {"learner": object()})


def test_resumed_logs_are_cut_back_to_the_checkpoint_even_after_a_new_column(tmp_path):
    from acmelike.loggers import CSVLogger
    from launch.lifecycle.logs import log_sizes, truncate_logs
    from tests.run_helpers import csv_column

    logger = CSVLogger(str(tmp_path), "actor_0")
    for steps in (10, 20, 35):  # 35: counted by the actor before its counter forwarded it (checkpoint says 30)
        logger.write({"episode_return": 1.0, "actor_steps": steps})
    sizes = log_sizes(str(tmp_path))
    assert sizes == {"actor_0.csv": 3}
    logger.write({"episode_return": 2.0, "actor_steps": 50, "learner_steps": 4})  # after the save; a new column
    logger.close()
    truncate_logs(str(tmp_path), sizes, {"actor_steps": 30, "learner_steps": 2})
    assert csv_column(str(tmp_path / "actor_0.csv"), "actor_steps") == [10.0, 20.0]
    resumed = CSVLogger(str(tmp_path), "actor_0", append=True)
    resumed.write({"episode_return": 3.0, "actor_steps": 40, "learner_steps": 5})
    resumed.close()
    assert csv_column(str(tmp_path / "actor_0.csv"), "actor_steps") == [10.0, 20.0, 40.0]
