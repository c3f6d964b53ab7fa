"""One process per run directory: a run holds `<run_dir>/.lock` (flock) from before its first write until it
ends; a second process is refused (exit 2, naming the holder's pid) and writes nothing; the lock of a process
killed with kill -9 is gone with it, so the next run takes the directory."""

import os
import signal
import subprocess
import sys
import time

import pytest
from program_launcher import Launcher
from run_helpers import REPO, command_line, environment
from stack import require

from launch.lifecycle.run_directory import (LOCK_FILE, RunDirectoryLock, RunDirectoryRefused, RunOptions,
                                           prepare_new_run_dir, write_config, write_run_options)

# A process that holds a run directory's lock until it is killed, as a run does.
HOLDER = ("import sys, time; from launch.lifecycle.run_directory import RunDirectoryLock; "
          "lock = RunDirectoryLock(sys.argv[1]); print('held', flush=True); time.sleep(600)")


@pytest.fixture()
def holder():
    """Starts a process holding the lock of the directory given; kills (-9) every such process at the end."""
    processes = []

    def hold(run_dir) -> subprocess.Popen:
        process = subprocess.Popen([sys.executable, "-c", HOLDER, str(run_dir)], stdout=subprocess.PIPE, text=True,
                                   env=environment(), cwd=REPO)
        processes.append(process)
        assert process.stdout.readline().strip() == "held"
        return process

    yield hold
    for process in processes:
        process.kill()
        process.wait()


def _modified(run_dir) -> dict:
    return {str(path): os.path.getmtime(path) for path in run_dir.rglob("*")}


def test_a_second_process_is_refused_naming_the_holder_and_a_killed_holders_lock_is_taken(tmp_path, holder):
    run_dir = tmp_path / "run"
    held = holder(run_dir)
    assert (run_dir / LOCK_FILE).read_text() == f"{held.pid}\n"
    arguments = ("--agent", "ppo", "--env", "gymnax/CartPole-v1", "--launch", "anakin", "--steps", 500,
                 "--progress-seconds", 60, "--run-dir", run_dir)
    refused = command_line(*arguments)  # a new run racing for the same empty directory
    assert refused.returncode == 2 and "Traceback" not in refused.stderr
    assert f"{run_dir} is in use by process {held.pid}" in refused.stderr and f"kill {held.pid}" in refused.stderr
    assert refused.stdout == "" and sorted(os.listdir(run_dir)) == [LOCK_FILE]  # nothing written

    held.send_signal(signal.SIGKILL)
    held.wait()
    require("gymnax")
    result = command_line(*arguments)  # the stale lock is taken over
    assert result.returncode == 0, result.stderr[-3000:]
    assert (run_dir / "summary.json").exists() and (run_dir / LOCK_FILE).read_text() == ""  # released at the end



def test_a_resume_of_a_held_run_directory_is_refused_and_touches_nothing(tmp_path, holder):
    from launch import make_experiment_config

    run_dir = tmp_path / "run"
    write_config(make_experiment_config(agent="dqn", environment="CartPole-v1", max_num_actor_steps=100,
                                        run_dir=str(run_dir)))
    write_run_options(str(run_dir), RunOptions())
    held = holder(run_dir)
    before = _modified(run_dir)
    refused = command_line("--resume", run_dir)
    assert refused.returncode == 2 and f"{run_dir} is in use by process {held.pid}" in refused.stderr
    assert refused.stdout == "" and _modified(run_dir) == before


def test_the_lock_file_is_no_earlier_run_and_outlives_overwrite(tmp_path):
    run_dir = tmp_path / "run"
    with RunDirectoryLock(str(run_dir)):
        prepare_new_run_dir(str(run_dir), overwrite=False)  # only the lock: an empty directory
        (run_dir / "config.json").write_text("{}")
        (run_dir / "checkpoints").mkdir()
        with pytest.raises(RunDirectoryRefused, match=r"not empty \(it holds checkpoints, config.json, \.\.\.\)"):
            prepare_new_run_dir(str(run_dir), overwrite=False)
        with pytest.raises(RunDirectoryRefused, match="in use by process"):
            RunDirectoryLock(str(run_dir))  # a second open file is a second holder, even in this process
        prepare_new_run_dir(str(run_dir), overwrite=True)
        assert os.listdir(run_dir) == [LOCK_FILE]  # the file held is the file the next process will lock
        assert (run_dir / LOCK_FILE).read_text() == f"{os.getpid()}\n"
    with RunDirectoryLock(str(run_dir)):  # released
        pass


def test_a_resume_while_the_run_goes_on_is_refused_and_after_kill_9_it_continues(tmp_path):
    run_dir = tmp_path / "run"
    running = Launcher("--agent", "dqn", "--env", "CartPole-v1", "--steps", 1_000_000, "--replay", "local",
                       "--config", "hidden_sizes=16", "--config", "min_replay_size=100", "--checkpoint-every", 0.01,
                       run_dir=run_dir, command_line=True)
    checkpoints = run_dir / "checkpoints"
    running.wait_until(lambda: checkpoints.is_dir() and any(name.isdigit() for name in os.listdir(checkpoints)),
                       timeout=180, what="the run's first checkpoint")
    assert (run_dir / LOCK_FILE).read_text() == f"{running.process.pid}\n"
    refused = command_line("--resume", run_dir)
    assert refused.returncode == 2, refused.stderr[-3000:]
    assert f"{run_dir} is in use by process {running.process.pid}" in refused.stderr

    running.process.send_signal(signal.SIGKILL)
    running.process.wait()
    time.sleep(0.5)
    step = max(int(name) for name in os.listdir(checkpoints) if name.isdigit())
    resumed = command_line("--resume", run_dir, "--steps", step + 300, "--progress-seconds", 60)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert (run_dir / LOCK_FILE).read_text() == ""
