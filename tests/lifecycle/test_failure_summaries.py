"""Every failure is a summary: an error that ends a run, in any mode, ends it with the JSON last line saying
`"failed": true` and `"error": "<type>: <message>"`, `<run_dir>/summary.json` (when the directory takes it),
`<run_dir>/failures/run.txt` with the traceback, and exit 1. Input that can be checked before running (a seed
PRNGKey cannot take, a run_options.json key nobody knows) is exit 2, with nothing written."""

import contextlib
import errno
import json
import os
import subprocess

import pytest
from program_launcher import last_json_line
from run_helpers import command_line
from stack import require

from acmelike.checkpointing import Checkpointer
from launch.engines import train as training  # where the command line dispatches to the engines
from launch.experiments.config import MAX_SEED
from launch.lifecycle.run_directory import RunOptions, write_config, write_run_options

TINY_DQN = ["--config", "hidden_sizes=16", "--config", "min_replay_size=100", "--progress-seconds", "60"]
NAN_DQN = ["--config", "learning_rate=1e38"]  # Adam's first step moves every weight by ~1e38: the loss is inf


def _failed(result: subprocess.CompletedProcess, run_dir, *texts: str, written: bool = True) -> dict:
    """The failed run's summary, checked: exit 1, the JSON last line, the error's text, summary.json and the
    failure file (`written`: when the run directory takes them)."""
    assert result.returncode == 1, result.stdout[-2000:] + result.stderr[-3000:]
    summary = last_json_line(result.stdout)
    assert summary["failed"] is True and "interrupted" not in summary
    for text in texts:
        assert text in summary["error"], summary["error"]
    (failure,) = [failure for failure in summary["failures"] if failure["name"] == "run"]
    assert failure["error"].split(":")[0] == summary["error"].split(":")[0]
    if written:
        assert json.loads((run_dir / "summary.json").read_text()) == summary
        assert failure["file"] == str(run_dir / "failures" / "run.txt")
        assert "Traceback" in (run_dir / "failures" / "run.txt").read_text()
    return summary


def test_a_nan_loss_ends_a_single_process_run_with_a_failed_summary(tmp_path):
    run_dir = tmp_path / "run"
    result = command_line("--agent", "dqn", "--env", "CartPole-v1", "--steps", 3000, "--replay", "local", *TINY_DQN,
                          *NAN_DQN, "--run-dir", run_dir)
    summary = _failed(result, run_dir, "NonFiniteLossError: DQN learner: loss", "lower the learning rate")
    assert summary["agent"] == "dqn" and summary["launch"] == "single" and summary["seed"] == 0
    assert summary["config"]["learning_rate"] == 1e38


def test_a_nan_loss_ends_an_anakin_run_with_a_failed_summary(tmp_path):
    require("gymnax")
    run_dir = tmp_path / "run"
    result = command_line("--agent", "dqn", "--env", "gymnax/CartPole-v1", "--launch", "anakin", "--steps", 2000,
                          "--progress-seconds", 60, *NAN_DQN, "--run-dir", run_dir)
    summary = _failed(result, run_dir, "NonFiniteLossError: Anakin seed 0", "Lower the learning rate")
    assert summary["launch"] == "anakin" and summary["seeds"] == [0]


def _record_dataset(tmp_path, monkeypatch) -> str:
    require("minari")
    from launch.cli.record import record

    monkeypatch.setenv("MINARI_DATASETS_PATH", str(tmp_path / "minari"))
    record(dataset_id="cartpole/random-v0", episodes=2, environment="CartPole-v1", seed=0)
    return "cartpole/random-v0"


def test_a_nan_loss_ends_an_offline_run_with_a_failed_summary(tmp_path, monkeypatch):
    dataset = _record_dataset(tmp_path, monkeypatch)
    run_dir = tmp_path / "run"
    result = command_line("--agent", "bc", "--env", "CartPole-v1", "--dataset", dataset, "--steps", 50,
                          "--eval-every", 0, "--config", "hidden_sizes=8", *NAN_DQN, "--run-dir", run_dir)
    summary = _failed(result, run_dir, "NonFiniteLossError")
    assert summary["launch"] == "offline" and summary["dataset"] == dataset


def _full_after_first_save(monkeypatch) -> None:
    """`Checkpointer.save` writes one checkpoint, then finds the disk full (as orbax's writes would raise it)."""
    original, calls = Checkpointer.save, []

    def save(self, step, **metadata):
        calls.append(step)
        if len(calls) == 1:
            return original(self, step, **metadata)
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), os.path.join(self.directory, f"{step:012d}.tmp"))

    monkeypatch.setattr(Checkpointer, "save", save)


def _check_disk_full(summary: dict, run_dir) -> None:
    assert "OSError: [Errno 28] No space left on device" in summary["error"]
    assert "MB free on the filesystem of" in summary["error"]  # which filesystem, and how much it has
    assert "a checkpoint of this run takes" in summary["error"]  # how much one more needs
    assert f"python -m launch --resume {run_dir}" in summary["error"]  # and how to carry on
    assert summary["checkpoint"] and summary["checkpoint"].startswith(str(run_dir / "checkpoints"))


def test_a_full_disk_during_a_periodic_save_ends_a_single_process_run_with_a_failed_summary(tmp_path, monkeypatch):
    _full_after_first_save(monkeypatch)
    run_dir = tmp_path / "run"
    result = command_line("--agent", "dqn", "--env", "CartPole-v1", "--steps", 100_000, "--replay", "local",
                          *TINY_DQN, "--checkpoint-every", 0.0001, "--run-dir", run_dir)
    _check_disk_full(_failed(result, run_dir), run_dir)


def test_a_full_disk_during_a_periodic_save_ends_an_anakin_run_with_a_failed_summary(tmp_path, monkeypatch):
    require("gymnax")
    _full_after_first_save(monkeypatch)
    run_dir = tmp_path / "run"
    result = command_line("--agent", "ppo", "--env", "gymnax/CartPole-v1", "--launch", "anakin", "--steps", 200_000,
                          "--progress-seconds", 60,
                          "--checkpoint-every", 0.0001, "--run-dir", run_dir)
    _check_disk_full(_failed(result, run_dir), run_dir)


def test_a_disk_that_fills_up_ends_the_run_with_a_failed_summary_saying_how_much_is_free(tmp_path):
    """A real full disk: a 2 MB tmpfs (as root; skipped where it cannot be mounted). Where it fills up varies (the
    replay's copy, orbax's arrays, a log), and so does the error's type; each says where and how much."""
    disk = tmp_path / "disk"
    disk.mkdir()
    mount = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(disk)], capture_output=True,
                           text=True)
    if mount.returncode != 0:
        pytest.skip(f"a full disk is a small tmpfs, which could not be mounted here: {mount.stderr}")
    try:
        run_dir = disk / "run"
        result = command_line("--agent", "dqn", "--env", "CartPole-v1", "--steps", 1_000_000, "--replay", "local",
                              "--config", "hidden_sizes=64,64", "--config", "min_replay_size=100",
                              "--checkpoint-every", 0.005, "--progress-seconds", 60, "--run-dir", run_dir)
        summary = _failed(result, run_dir, f"MB free on the filesystem of {run_dir}", written=False)
        assert "28" in summary["error"] and "No space left on device" in summary["error"]
        assert summary["checkpoint"] and f"python -m launch --resume {run_dir}" in summary["error"]
    finally:
        subprocess.run(["umount", str(disk)], check=True)


@contextlib.contextmanager
def read_only(directory):
    """`directory` read-only, as a read-only filesystem or a read-only directory are. As root (which chmod does not
    stop) a read-only bind mount of it onto itself; else chmod. Skips if neither can be made."""
    if os.geteuid() != 0:
        modes = {path: os.stat(path).st_mode for path in [str(directory)] + [os.path.join(root, name)
                 for root, names, files in os.walk(directory) for name in names]}
        for path in modes:
            os.chmod(path, 0o555)
        try:
            yield
        finally:
            for path, mode in modes.items():
                os.chmod(path, mode)
        return
    mount = subprocess.run(["mount", "--bind", str(directory), str(directory)], capture_output=True, text=True)
    if mount.returncode != 0:
        pytest.skip(f"as root, a read-only directory needs a read-only bind mount, which failed: {mount.stderr}")
    try:
        remount = subprocess.run(["mount", "-o", "remount,bind,ro", str(directory)], capture_output=True, text=True)
        if remount.returncode != 0:
            pytest.skip(f"as root, a read-only directory needs a read-only bind mount, which failed: {remount.stderr}")
        yield
    finally:
        subprocess.run(["umount", str(directory)], check=True)


def test_a_new_run_in_a_read_only_directory_prints_its_failed_summary_and_says_why_none_is_written(tmp_path):
    parent = tmp_path / "read-only"
    parent.mkdir()
    run_dir = parent / "run"
    with read_only(parent):
        result = command_line("--agent", "dqn", "--env", "CartPole-v1", "--steps", 100, "--run-dir", run_dir)
    summary = _failed(result, run_dir, "read-only", written=False)
    assert summary["failures"][0]["file"] is None and "start the run again" in summary["error"]
    assert "summary.json was not written" in result.stderr
    assert not run_dir.exists()


def test_resuming_a_run_whose_directory_went_read_only_prints_its_failed_summary(tmp_path):
    run_dir = tmp_path / "run"
    first = command_line("--agent", "dqn", "--env", "CartPole-v1", "--steps", 300, "--replay", "local", *TINY_DQN,
                         "--run-dir", run_dir)
    assert first.returncode == 0, first.stderr[-3000:]
    before = {path: os.path.getmtime(path) for path in map(str, run_dir.rglob("*"))}
    with read_only(run_dir):
        result = command_line("--resume", run_dir, "--steps", 600)
    summary = _failed(result, run_dir, "Read-only file system" if os.geteuid() == 0 else "Permission denied",
                      f"{run_dir} is read-only here", "--resume", written=False)
    assert summary["agent"] == "dqn" and summary["launch"] == "single"
    assert f"summary.json was not written to {run_dir}: the directory is read-only" in result.stderr
    assert {path: os.path.getmtime(path) for path in map(str, run_dir.rglob("*"))} == before


def test_a_replay_that_fails_to_restore_ends_the_resume_with_a_failed_summary(tmp_path, monkeypatch):
    """Whatever escapes a checkpoint's reader (a checkpoint the manifest check finds unreadable is refused, exit 2,
    or skipped: tests/lifecycle/test_checkpoint_fallback.py) ends as a summary too."""
    from acmelike.replay.local import LocalReplay

    run_dir = tmp_path / "run"
    first = command_line("--agent", "dqn", "--env", "CartPole-v1", "--steps", 300, "--replay", "local", *TINY_DQN,
                         "--run-dir", run_dir)
    assert first.returncode == 0, first.stderr[-3000:]

    def corrupted(self, directory):
        raise RuntimeError("corrupted record at 0")

    monkeypatch.setattr(LocalReplay, "restore", corrupted)
    result = command_line("--resume", run_dir, "--steps", 600)
    summary = _failed(result, run_dir, "RuntimeError: corrupted record at 0")
    assert summary["checkpoint"] and summary["launch"] == "single"


@pytest.mark.usefixtures("packages_present")  # the engine is stubbed: no Launchpad needed
def test_a_distributed_program_that_fails_ends_with_a_failed_summary(tmp_path, monkeypatch):
    """Through the launcher's error, `DistributedRunError` (its nodes wrote their own failure files), or any other
    error its engine raises (the launcher's own failure file)."""
    from launch.engines.distributed.supervisor import DistributedRunError

    def node_failed(config, **kwargs):
        raise DistributedRunError("distributed program failed in node(s): learner (see the traceback).\n--- node ...",
                                  summary={"agent": "dqn", "failures": [{"name": "learner", "error": "E: x"}]})

    run_dir = tmp_path / "run"
    arguments = ("--agent", "dqn", "--env", "CartPole-v1", "--launch", "local_mp", "--steps", 100)
    monkeypatch.setattr(training, "run_distributed", node_failed)
    result = command_line(*arguments, "--run-dir", run_dir)
    assert result.returncode == 1
    summary = last_json_line(result.stdout)
    assert summary["failed"] is True and [failure["name"] for failure in summary["failures"]] == ["learner"]
    assert summary["error"] == "DistributedRunError: distributed program failed in node(s): learner (see the traceback)."
    assert json.loads((run_dir / "summary.json").read_text()) == summary

    def engine_failed(config, **kwargs):
        raise ConnectionError("the engine could not start")

    monkeypatch.setattr(training, "run_distributed", engine_failed)
    result = command_line(*arguments, "--run-dir", tmp_path / "other")
    summary = _failed(result, tmp_path / "other", "ConnectionError: the engine could not start")
    assert summary["launch"] == "local_mp"


@pytest.mark.parametrize("seed", ["99999999999999999999", str(MAX_SEED + 1), "-1"])
def test_a_seed_prng_key_cannot_take_is_refused_before_anything_is_written(tmp_path, seed):
    run_dir = tmp_path / "run"
    result = command_line("--agent", "dqn", "--env", "CartPole-v1", "--seed", seed, "--run-dir", run_dir)
    assert result.returncode == 2 and "--seed" in result.stderr, result.stderr[-2000:]
    assert not run_dir.exists()
    empty = tmp_path / "empty"
    empty.mkdir()
    result = command_line("--agent", "ppo", "--env", "gymnax/CartPole-v1", "--launch", "anakin", "--seeds",
                          f"0-{seed}", "--run-dir", empty)
    assert result.returncode == 2 and "--seeds" in result.stderr, result.stderr[-2000:]
    assert not os.listdir(empty)


def test_the_largest_seed_is_one_prng_key_takes_and_the_python_api_refuses_larger(tmp_path):
    import jax

    from launch import make_experiment_config
    from launch.engines.anakin import AnakinConfig

    assert not (jax.random.PRNGKey(MAX_SEED) == jax.random.PRNGKey(0)).all()
    try:  # why larger seeds are refused: they repeat smaller seeds' keys (jax 0.6.2, 0.10.2), or are not taken
        assert (jax.random.PRNGKey(MAX_SEED + 1) == jax.random.PRNGKey(0)).all()
    except (OverflowError, ValueError):
        pass
    assert make_experiment_config(agent="dqn", environment="CartPole-v1", max_num_actor_steps=10,
                                  seed=MAX_SEED).seed == MAX_SEED
    with pytest.raises(ValueError, match=r"ExperimentConfig.seed = 4294967296; a seed must be an integer from 0"):
        make_experiment_config(agent="dqn", environment="CartPole-v1", max_num_actor_steps=10, seed=MAX_SEED + 1,
                               run_dir=str(tmp_path / "run"))
    with pytest.raises(ValueError, match=r"AnakinConfig.seeds = -1"):
        AnakinConfig(agent="ppo", environment="gymnax/CartPole-v1", max_num_actor_steps=10, seeds=(0, -1))
    assert not os.listdir(tmp_path)


def test_an_unknown_key_in_run_options_is_refused_naming_it_and_its_file(tmp_path):
    from launch import make_experiment_config

    run_dir = str(tmp_path / "run")
    write_config(make_experiment_config(agent="dqn", environment="CartPole-v1", max_num_actor_steps=100,
                                        run_dir=run_dir))
    write_run_options(run_dir, RunOptions())
    path = os.path.join(run_dir, "run_options.json")
    with open(path) as f:
        options = json.load(f)
    with open(path, "w") as f:
        json.dump({**options, "checkpoint_every_minute": 5}, f)
    before = {name: os.path.getmtime(os.path.join(run_dir, name)) for name in os.listdir(run_dir)}
    result = command_line("--resume", run_dir)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert f"{path} has the unknown key(s) 'checkpoint_every_minute'" in result.stderr, result.stderr[-2000:]
    assert {name: os.path.getmtime(os.path.join(run_dir, name)) for name in os.listdir(run_dir)} == before


def test_a_full_disk_a_library_wrapped_in_its_own_error_still_says_where_and_how_much(tmp_path, capsys):
    from launch.experiments.summaries import failed_summary

    run_dir = tmp_path / "run"
    run_dir.mkdir()
    try:
        try:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(run_dir / "checkpoints" / "x.tmp"))
        except OSError as full:
            raise ValueError("could not write the checkpoint's arrays") from full
    except ValueError as error:
        summary = failed_summary({"agent": "dqn"}, error, str(run_dir))
    assert summary["error"].startswith("ValueError: could not write the checkpoint's arrays (")
    assert f"MB free on the filesystem of {run_dir}/checkpoints/x.tmp" in summary["error"]
    assert "start the run again" in summary["error"] and summary["checkpoint"] is None
    assert json.loads((run_dir / "summary.json").read_text()) == summary
    assert "Traceback" in (run_dir / "failures" / "run.txt").read_text()
