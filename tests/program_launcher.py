"""Launches tests/distributed_script.py in a subprocess and watches every process it starts.

Launchpad's stopper signals the launcher process and may kill it, so tests never launch programs inside pytest.
"""

import os
import subprocess
import sys
import time

import psutil
import pytest

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "distributed_script.py")


class Launcher:
    """Runs tests/distributed_script.py, recording every process it starts (to check none outlives it)."""

    def __init__(self, *args, run_dir):
        self.run_dir = str(run_dir)
        self.process = subprocess.Popen(
            [sys.executable, SCRIPT, *map(str, args), "--run-dir", self.run_dir],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        )
        self.descendants = set()

    def _record(self):
        try:
            self.descendants.update(p.pid for p in psutil.Process(self.process.pid).children(recursive=True))
        except psutil.NoSuchProcess:
            pass

    def wait(self, timeout):
        deadline = time.time() + timeout
        while self.process.poll() is None and time.time() < deadline:
            self._record()
            time.sleep(0.2)
        if self.process.poll() is None:
            self.kill()
            pytest.fail(f"launcher still running after {timeout} s:\n{self.process.stdout.read()[-5000:]}")
        self.output = self.process.stdout.read()
        return self.process.returncode

    def wait_for_progress(self, timeout):
        path = os.path.join(self.run_dir, "progress.json")
        deadline = time.time() + timeout
        while not os.path.exists(path) and time.time() < deadline and self.process.poll() is None:
            self._record()
            time.sleep(0.2)
        assert os.path.exists(path), "the program never reported progress"

    def left_behind(self):
        time.sleep(0.5)
        alive = []
        for pid in self.descendants:
            try:
                process = psutil.Process(pid)
                if process.status() != psutil.STATUS_ZOMBIE:
                    alive.append(f"{pid}: {' '.join(process.cmdline())[:200]}")
            except psutil.NoSuchProcess:
                pass
        return alive

    def kill(self):
        for pid in self.descendants | {self.process.pid}:
            try:
                psutil.Process(pid).kill()
            except psutil.NoSuchProcess:
                pass


def line_after(output, prefix):
    """The rest of the last output line that starts with `prefix`."""
    lines = [line for line in output.splitlines() if line.startswith(prefix)]
    assert lines, f"no {prefix!r} line in:\n{output[-5000:]}"
    return lines[-1][len(prefix):]
