"""Launches tests/distributed_script.py in a subprocess and watches every process it starts.

Launchpad's stopper signals the launcher process and may kill it, so tests never launch programs inside pytest.
"""

import json
import os
import signal
import subprocess
import sys
import tempfile
import time

import psutil
import pytest

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "distributed_script.py")


class Launcher:
    """Runs tests/distributed_script.py (or, with `command_line=True`, `python -m launch`) with `args`, recording
    every process it starts (to check none outlives it). A test that fails before its program ends leaves nothing
    running either: tests/conftest.py kills, after every test, each launcher it started that is still running
    (`kill_the_still_running`).

    With `own_process_group`, the launcher leads a new process group, so a test can signal the whole group as a
    terminal's Ctrl-C does (`signal_group`). With `separate_stderr`, `output` is stdout alone (`errors`: stderr).

    A launcher still running at a `wait`'s deadline is sent SIGABRT before it is killed: with Python's faulthandler
    on (PYTHONFAULTHANDLER, set here) it prints every thread's stack, which the test's failure then shows, so a hang
    names where it hung.
    """

    def __init__(self, *args, run_dir, command_line: bool = False, own_process_group: bool = False,
                 separate_stderr: bool = False):
        self.run_dir = str(run_dir)
        self._own_process_group = own_process_group
        program = ["-m", "launch"] if command_line else [SCRIPT]
        # Files, not pipes: a chatty program never blocks on a full pipe that is read only at the end.
        self._stdout = tempfile.TemporaryFile(mode="w+")
        self._stderr = tempfile.TemporaryFile(mode="w+") if separate_stderr else None
        self.process = subprocess.Popen(
            [sys.executable, *program, *map(str, args), "--run-dir", self.run_dir],
            stdout=self._stdout, stderr=self._stderr or subprocess.STDOUT, text=True,
            start_new_session=own_process_group, env={**os.environ, "PYTHONFAULTHANDLER": "1"},
        )
        self.descendants = set()
        self.errors = ""
        Launcher.started.append(self)

    started: list = []  # every Launcher since the last `kill_the_still_running`

    def signal_group(self, signal_number: int) -> None:
        """Signals the launcher's process group (with `own_process_group`, its id is the launcher's pid), which
        may outlive the launcher; nothing if the whole group has gone (a run that failed early: its own error,
        not this, is the one to report)."""
        if not self._own_process_group:  # the group would be pytest's own
            raise ValueError("signal_group needs a Launcher started with own_process_group=True")
        try:
            os.killpg(self.process.pid, signal_number)
        except ProcessLookupError:
            pass

    def _record(self):
        try:
            self.descendants.update(p.pid for p in psutil.Process(self.process.pid).children(recursive=True))
        except psutil.NoSuchProcess:
            pass

    def _watch(self, until) -> None:
        """Polls the launcher every 0.2 s until `until()` holds or it exits, recording its processes every 2 s:
        a recursive process scan reads /proc/<pid>/stat of every process, which the kernel sums over each one's
        threads (hundreds per node), and at 5 scans a second it took a whole core from the programs under test."""
        last_record = 0.0
        while self.process.poll() is None and not until():
            if time.time() - last_record >= 2.0:
                self._record()
                last_record = time.time()
            time.sleep(0.2)
        self._record()

    def wait(self, timeout):
        deadline = time.time() + timeout
        self._watch(lambda: time.time() >= deadline)
        if self.process.poll() is None:
            self._fail(f"launcher still running after {timeout} s")
        self.output = self._read(self._stdout)
        if self._stderr is not None:
            self.errors = self._read(self._stderr)
        return self.process.returncode

    def wait_until(self, condition, timeout, what: str) -> None:
        """Polls until `condition()` holds; fails the test, with the launcher's output, if it exits first or
        `timeout` seconds pass (a launcher still running is stopped, its stacks printed first)."""
        deadline = time.time() + timeout
        self._watch(lambda: condition() or time.time() >= deadline)
        if not condition():
            self._fail(f"{what} did not happen within {timeout} s (launcher exit code {self.process.poll()})")

    def _fail(self, message: str):
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGABRT)  # faulthandler prints every thread's stack, then it dies
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                pass
            self.kill()
        errors = "" if self._stderr is None else f"\nstderr:\n{self._read(self._stderr)[-5000:]}"
        pytest.fail(f"{message}:\n{self._read(self._stdout)[-5000:]}{errors}")

    @staticmethod
    def _read(file) -> str:
        file.seek(0)
        return file.read()

    def wait_for_progress(self, timeout):
        path = os.path.join(self.run_dir, "progress.json")
        self.wait_until(lambda: os.path.exists(path), timeout, "the program's first progress report")

    def left_behind(self, grace_s: float = 5.0):
        """The descendants still alive `grace_s` after the program ended (a process killed a moment ago may still
        be tearing down its memory on a loaded machine: seen with an empty command line)."""
        deadline = time.monotonic() + grace_s
        while True:
            time.sleep(0.5)
            alive = []
            for pid in self.descendants:
                try:
                    process = psutil.Process(pid)
                    if process.status() not in (psutil.STATUS_ZOMBIE, psutil.STATUS_DEAD):
                        alive.append(f"{pid}: {' '.join(process.cmdline())[:200]}")
                except psutil.NoSuchProcess:
                    pass
            if not alive or time.monotonic() > deadline:
                return alive

    def kill(self):
        for pid in self.descendants | {self.process.pid}:
            try:
                psutil.Process(pid).kill()
            except psutil.NoSuchProcess:
                pass


def kill_the_still_running() -> list:
    """Kills every launcher started since the last call whose launcher process still runs, with all the processes
    recorded under it (and those it has now); returns their command lines. For a test's teardown."""
    killed = []
    for launcher in Launcher.started:
        if launcher.process.poll() is None:
            launcher._record()
            launcher.kill()
            launcher.process.wait()
            killed.append(" ".join(map(str, launcher.process.args))[:200])
    Launcher.started.clear()
    return killed


def last_json_line(output) -> dict:
    """The JSON object a command prints alone on its last line (its summary)."""
    summary = json.loads(output.rstrip("\n").splitlines()[-1])
    assert isinstance(summary, dict)
    return summary


def line_after(output, prefix):
    """The rest of the last output line that starts with `prefix`."""
    lines = [line for line in output.splitlines() if line.startswith(prefix)]
    assert lines, f"no {prefix!r} line in:\n{output[-5000:]}"
    return lines[-1][len(prefix):]
