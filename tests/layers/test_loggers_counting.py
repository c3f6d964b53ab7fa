"""Tests of the loggers (terminal, CSV, plotting, routing) and of Counter."""

import csv
import threading

import numpy as np
import pytest

from acmelike import loggers
from acmelike.counting import Counter
from acmelike.loggers import (
    CSVLogger,
    Dispatcher,
    InMemoryLogger,
    Logger,
    NoOpLogger,
    TerminalLogger,
    make_default_logger,
    plot_learning_curve,
)
from acmelike.loggers.plotting import moving_average


class FakeClock:
    def __init__(self, now: float = 0.0):
        self.now = now

    def __call__(self) -> float:
        return self.now


def _read_csv(path):
    with open(path, newline="") as f:
        reader = csv.DictReader(f)
        return reader.fieldnames, list(reader)


# ----------------------------------------------------------------------------------------------- CSV


def test_csv_round_trip(tmp_path):
    logger = CSVLogger(str(tmp_path / "runs"), label="actor")
    logger.write({"actor_steps": 10, "episode_return": np.float32(1.5), "name": "a"})
    logger.write({"actor_steps": np.int64(20), "episode_return": 0.1 + 0.2, "name": "b"})
    # Rows are flushed at once: readable before close.
    fieldnames, rows = _read_csv(tmp_path / "runs" / "actor.csv")
    assert logger.file_path == str(tmp_path / "runs" / "actor.csv")
    assert fieldnames == ["actor_steps", "episode_return", "name"]
    assert rows[0] == {"actor_steps": "10", "episode_return": "1.5", "name": "a"}
    assert float(rows[1]["episode_return"]) == 0.1 + 0.2  # full precision
    assert rows[1]["actor_steps"] == "20"
    logger.close()
    logger.close()  # idempotent


def test_csv_new_keys_widen_the_header_and_missing_keys_are_empty(tmp_path):
    logger = CSVLogger(str(tmp_path), label="learner")
    logger.write({"steps": 1, "loss": 0.5})
    logger.write({"steps": 2, "loss": 0.4, "q_mean": 3.0})
    logger.write({"steps": 3})
    logger.write({"steps": 4, "loss": 0.2, "q_mean": 2.0, "array": np.array([1.0, 2.0])})
    logger.close()
    fieldnames, rows = _read_csv(tmp_path / "learner.csv")
    assert fieldnames == ["steps", "loss", "q_mean", "array"]
    assert [row["steps"] for row in rows] == ["1", "2", "3", "4"]
    assert rows[0]["q_mean"] == "" and rows[1]["q_mean"] == "3.0"
    assert rows[2]["loss"] == "" and rows[3]["array"] == "[1. 2.]"


def test_csv_append_continues_an_existing_file(tmp_path):
    first = CSVLogger(str(tmp_path), label="x")
    first.write({"a": 1, "b": 2})
    first.close()
    second = CSVLogger(str(tmp_path), label="x", append=True)
    second.write({"b": 4, "a": 3})
    second.close()
    fieldnames, rows = _read_csv(tmp_path / "x.csv")
    assert fieldnames == ["a", "b"] and [row["a"] for row in rows] == ["1", "3"]
    fresh = CSVLogger(str(tmp_path), label="x")  # append=False starts over
    fresh.write({"c": 5})
    fresh.close()
    assert _read_csv(tmp_path / "x.csv") == (["c"], [{"c": "5"}])


# ----------------------------------------------------------------------------------------------- terminal


def test_terminal_logger_format_and_rate_limit():
    lines, clock = [], FakeClock()
    logger = TerminalLogger("train", time_delta=10.0, print_fn=lines.append, clock=clock)
    logger.write({"episode_return": 12.3456789, "steps": np.int64(3), "q": np.array([0.123456, 2.0])})
    clock.now = 5.0
    logger.write({"steps": 4})  # too soon: dropped
    clock.now = 10.0
    logger.write({"steps": 5, "loss": np.float32(1e-7)})
    assert lines == [
        "[train] episode_return = 12.35 | steps = 3 | q = [0.1235, 2]",
        "[train] steps = 5 | loss = 1e-07",
    ]


def test_terminal_logger_time_delta_zero_prints_every_write():
    lines = []
    logger = TerminalLogger("x", time_delta=0.0, print_fn=lines.append)
    for i in range(3):
        logger.write({"i": i})
    assert lines == ["[x] i = 0", "[x] i = 1", "[x] i = 2"]


# ----------------------------------------------------------------------------------------------- routing


def test_dispatcher_noop_in_memory_and_protocol():
    memory, lines = InMemoryLogger(), []
    dispatcher = Dispatcher([memory, TerminalLogger("d", print_fn=lines.append), NoOpLogger()])
    for logger in (dispatcher, memory, NoOpLogger(), TerminalLogger("t")):
        assert isinstance(logger, Logger)
    dispatcher.write({"a": 1})
    dispatcher.close()
    assert memory.data == [{"a": 1}] and lines == ["[d] a = 1"]


def test_make_default_logger(tmp_path, capsys):
    terminal_only = make_default_logger("evaluator")
    assert isinstance(terminal_only, TerminalLogger)
    logger = make_default_logger("actor", directory=str(tmp_path), time_delta=0.0)
    logger.write({"episode_return": 2.0})
    logger.close()
    assert "[actor] episode_return = 2" in capsys.readouterr().out
    assert _read_csv(tmp_path / "actor.csv") == (["episode_return"], [{"episode_return": "2.0"}])


# ----------------------------------------------------------------------------------------------- plotting


def test_moving_average():
    np.testing.assert_allclose(moving_average(np.array([1.0, 2.0, 3.0, 4.0]), 2), [1.0, 1.5, 2.5, 3.5])
    np.testing.assert_allclose(moving_average(np.array([2.0, 4.0]), 10), [2.0, 3.0])


def test_plot_learning_curve_writes_a_png(tmp_path):
    logger = CSVLogger(str(tmp_path), label="actor")
    for episode in range(30):
        logger.write({"actor_steps": 10 * episode, "episode_return": float(episode % 7)})
    logger.close()
    png = plot_learning_curve(
        str(tmp_path / "actor.csv"), str(tmp_path / "curve.png"), window=5, title="CartPole"
    )
    assert png == str(tmp_path / "curve.png")
    with open(png, "rb") as f:
        assert f.read(8) == b"\x89PNG\r\n\x1a\n"
    with pytest.raises(ValueError, match="'missing' is not in .*actor_steps"):
        plot_learning_curve(str(tmp_path / "actor.csv"), str(tmp_path / "x.png"), y="missing")


def test_importing_loggers_does_not_import_matplotlib():
    import subprocess
    import sys

    code = "import sys, acmelike.loggers; print('matplotlib' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "False"
    assert loggers.plot_learning_curve is plot_learning_curve


# ----------------------------------------------------------------------------------------------- Counter


def test_counter_increments():
    counter = Counter()
    assert counter.get_counts() == {}
    assert counter.increment(steps=5, episodes=1) == {"steps": 5, "episodes": 1}
    assert counter.increment(steps=3) == {"steps": 8, "episodes": 1}
    assert counter.get_counts() == {"steps": 8, "episodes": 1}
    assert Counter(prefix="eval").increment(episodes=2) == {"eval_episodes": 2}


def test_counter_forwards_to_parent_with_prefix_in_batches():
    clock = FakeClock()
    root = Counter()
    root.increment(learner_steps=7)
    actor = Counter(root, prefix="actor", time_delta=1.0, clock=clock)
    assert actor.get_counts() == {"learner_steps": 7}  # the parent's counts before any increment

    # The first increment is forwarded at once.
    assert actor.increment(steps=10, episodes=1) == {"actor_steps": 10, "actor_episodes": 1, "learner_steps": 7}
    assert root.get_counts() == {"learner_steps": 7, "actor_steps": 10, "actor_episodes": 1}

    # Within time_delta: kept locally, but reported by the child.
    clock.now = 0.5
    root.increment(learner_steps=1)
    assert actor.increment(steps=5)["actor_steps"] == 15
    assert root.get_counts()["actor_steps"] == 10
    assert actor.get_counts() == {"actor_steps": 15, "actor_episodes": 1, "learner_steps": 7}

    # After time_delta: forwarded, and the child sees the parent's news.
    clock.now = 1.0
    assert actor.increment(steps=1) == {"actor_steps": 16, "actor_episodes": 1, "learner_steps": 8}
    assert root.get_counts() == {"learner_steps": 8, "actor_steps": 16, "actor_episodes": 1}

    # flush forwards pending counts immediately.
    actor.increment(episodes=1)
    assert root.get_counts()["actor_episodes"] == 1
    assert actor.flush()["actor_episodes"] == 2
    assert root.get_counts()["actor_episodes"] == 2


def test_two_children_share_a_parent():
    root = Counter()
    a = Counter(root, prefix="actor", time_delta=0.0)
    b = Counter(root, prefix="actor", time_delta=0.0)
    a.increment(steps=3)
    assert b.increment(steps=4) == {"actor_steps": 7}
    assert root.get_counts() == {"actor_steps": 7}


@pytest.mark.parametrize("time_delta", [0.0, 1000.0])
def test_counter_is_thread_safe(time_delta):
    root = Counter()
    child = Counter(root, prefix="actor", time_delta=time_delta)
    num_threads, increments = 8, 2000

    def work():
        for _ in range(increments):
            child.increment(steps=1)
            root.increment(learner_steps=1)

    threads = [threading.Thread(target=work) for _ in range(num_threads)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    child.flush()
    total = num_threads * increments
    assert root.get_counts() == {"actor_steps": total, "learner_steps": total}
    assert child.get_counts() == {"actor_steps": total, "learner_steps": total}


def test_learning_curve_of_a_run_stopped_before_any_episode_ended(tmp_path):
    from acmelike.loggers.plotting import plot_run_learning_curve

    (tmp_path / "actor_0.csv").write_text("")  # the actor's log was opened, nothing was written yet
    assert plot_run_learning_curve(str(tmp_path), actor_labels=["actor_0", "actor_1"]) is None
    assert not (tmp_path / "learning_curve.png").exists()
    (tmp_path / "actor_1.csv").write_text("steps\n3\n")
    with pytest.raises(ValueError, match="actor_steps"):  # a log of the wrong kind is still named
        plot_run_learning_curve(str(tmp_path), actor_labels=["actor_1"])
