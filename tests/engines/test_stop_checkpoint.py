"""The checkpoint every distributed engine takes when a signal stops the program (in-process: the engines' own
stops are tests/lifecycle/test_distributed_stops.py's and tests/engines/test_interrupts.py's)."""

import json
import os
import signal
import time

from launch.engines.distributed.supervisor import checkpoint_before_stopping
from launch.experiments.interrupts import StopRequests


def _progress(run_dir, actor_steps):
    (run_dir / "progress.json").write_text(json.dumps({"actor_steps": actor_steps}))


def test_the_learner_checkpoints_once_actors_have_stepped(tmp_path, capsys):
    calls = []
    assert checkpoint_before_stopping(lambda: calls.append(1), str(tmp_path), "SIGINT") is None
    assert calls == [] and "before the first actor step: nothing to checkpoint" in capsys.readouterr().out
    _progress(tmp_path, 0)
    assert checkpoint_before_stopping(lambda: calls.append(1), str(tmp_path), "SIGINT") is None and calls == []

    _progress(tmp_path, 1200)
    assert checkpoint_before_stopping(lambda: "checkpoints/000000001234", str(tmp_path), "SIGTERM") == \
        "checkpoints/000000001234"
    assert "checkpoint checkpoints/000000001234 written" in capsys.readouterr().out


def test_a_failed_stop_checkpoint_is_a_named_failure_and_the_stop_goes_on(tmp_path):
    _progress(tmp_path, 1200)

    def fail():
        raise OSError(28, "No space left on device")

    assert checkpoint_before_stopping(fail, str(tmp_path), "SIGINT") is None
    text = (tmp_path / "failures" / "stop_checkpoint.txt").read_text()
    assert "the checkpoint at the stop (SIGINT) failed" in text and "No space left on device" in text


def _send(number):
    os.kill(os.getpid(), number)
    time.sleep(0.05)  # Python runs the handler at the next bytecode boundary


def test_a_held_signal_reaches_the_handler_it_replaced_only_when_released():
    seen = []
    previous = {number: signal.signal(number, lambda number, frame: seen.append(number))
                for number in (signal.SIGINT, signal.SIGTERM)}
    try:
        with StopRequests(hold_back=True) as stop:
            _send(signal.SIGTERM)
            assert stop.held and stop.signal_name == "SIGTERM" and seen == []
            stop.release()
            stop.release()
            assert not stop.held and seen == [signal.SIGTERM]  # once
        with StopRequests(hold_back=True, passes=lambda number: number == signal.SIGTERM):  # the program's own stop
            _send(signal.SIGTERM)
            assert seen == [signal.SIGTERM] * 2
        with StopRequests(hold_back=True) as stop:  # a second signal goes on at once
            _send(signal.SIGINT)
            _send(signal.SIGINT)
            assert not stop.held and seen == [signal.SIGTERM] * 2 + [signal.SIGINT]
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)
