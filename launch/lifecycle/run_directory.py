"""A run directory: how the run was launched, what identifies it, and whether it may be written or resumed.

    <run_dir>/config.json          the resolved experiment (`write_config`), read back by `resume_arguments`
    <run_dir>/run_options.json     how it was launched (RunOptions), so `--resume RUN_DIR` needs no flags
    <run_dir>/checkpoints/<step>/  checkpoints (lifecycle.checkpoints, lifecycle.node_checkpoints)
    <run_dir>/snapshots/<step>/    evaluation-policy snapshots (lifecycle.snapshots)
    <run_dir>/failures/<name>.txt  what failed, and its traceback (a node, or a final save: `record_failure`)
    <run_dir>/*.csv, tensorboard/  logs (lifecycle.logs)
    <run_dir>/.lock                the lock of the one process running the run (`RunDirectoryLock`), and its pid
"""

import dataclasses
import errno
import fcntl
import json
import os
import shutil
import sys
import traceback
from typing import Any, Dict, Optional

from acmelike import files
from acmelike.checkpointing import (
    CheckpointError,
    check_metadata,
    latest_checkpoint,
    newest_checkpoint_passing,
    read_metadata,
    verify_checkpoint,
)
from launch.engines.bind_address import check_address
from launch.experiments.config import OfflineExperimentConfig
from launch.experiments.overrides import assignments

CHECKPOINTS, RUN_OPTIONS, FAILURES_DIR, LOCK_FILE = "checkpoints", "run_options.json", "failures", ".lock"
CONFIG_FILE = "config.json"
DEFAULT_CHECKPOINT_MINUTES = 10.0
READ_ONLY_ERRNOS = (errno.EROFS, errno.EACCES, errno.EPERM)  # "this cannot be written here"


class RunDirectoryRefused(ValueError):
    """A run directory this run may not use: another run's files are there, or another process holds its lock.
    Raised before this run writes anything there (the command line exits 2)."""


def latest_run_checkpoint(run_dir: Optional[str]) -> Optional[str]:
    """The run's newest complete checkpoint, or None (also without a run directory)."""
    return latest_checkpoint(os.path.join(run_dir, CHECKPOINTS)) if run_dir else None


def _contents(run_dir: str) -> list:
    """What an earlier run left in `run_dir`: its entries but the lock file, which outlives every run."""
    return sorted(name for name in os.listdir(run_dir) if name != LOCK_FILE) if os.path.isdir(run_dir) else []


def check_new_run_dir(run_dir: str, overwrite: bool) -> None:
    """A new run's directory must be a directory, and an earlier run's files may be replaced only with
    `overwrite` (RunDirectoryRefused naming the directory and what it holds otherwise). Changes nothing."""
    if os.path.exists(run_dir) and not os.path.isdir(run_dir):
        raise RunDirectoryRefused(f"--run-dir {run_dir} is a file, not a directory: choose a directory path.")
    held = _contents(run_dir)
    if not overwrite and held:
        has_run = os.path.exists(os.path.join(run_dir, CONFIG_FILE))
        resume = f" continue its run with --resume {run_dir} (from Python: launch.train(config, resume=True))," \
            if has_run else ""
        raise RunDirectoryRefused(
            f"--run-dir {run_dir} is not empty (it holds {', '.join(held[:6])}, ...):{resume} choose a new directory, "
            f"or pass --overwrite (launch.train(config, overwrite=True)) to replace its contents."
        )


def prepare_new_run_dir(run_dir: str, overwrite: bool) -> None:
    """`check_new_run_dir`, then removes what an earlier run left there (only with `overwrite`). The lock file
    stays: the caller holds it (`RunDirectoryLock`), and a new file would be a second lock."""
    check_new_run_dir(run_dir, overwrite)
    for name in _contents(run_dir) if overwrite else ():
        path = os.path.join(run_dir, name)
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path)
        else:
            os.remove(path)


class RunDirectoryLock:
    """The one process running the run in `run_dir`: an exclusive `flock` on `<run_dir>/.lock`, which holds the
    holder's pid. Taken (the directory made if need be) before the run writes anything, held until `release` or
    the process ends: the kernel lets go of a killed process's lock (kill -9 included), so a stale lock is simply
    taken. A second process is refused (RunDirectoryRefused naming the holder's pid), so two runs never interleave
    one directory's logs, checkpoints and summary.

        lock = RunDirectoryLock(run_dir)     # before the first write; then, for a new run, check it is empty
        ...
        lock.release()

    A flock belongs to the open file, not to its process's children: a distributed program's node processes write
    the directory their launcher locked, and never take the lock themselves. The file is never removed (another
    process may be waiting on it), and `check_new_run_dir` and `--overwrite` pass it by. A read-only directory is
    locked through a read-only open of an existing lock file; without one, the OSError is raised for the run's
    failure summary to report.
    """

    def __init__(self, run_dir: str):
        os.makedirs(run_dir, exist_ok=True)
        path = os.path.join(run_dir, LOCK_FILE)
        self._writable = True
        try:
            self._fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as error:
            if error.errno not in READ_ONLY_ERRNOS or not os.path.exists(path):
                raise
            self._fd, self._writable = os.open(path, os.O_RDONLY), False
        try:
            fcntl.flock(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(self._fd)
            holder = _lock_holder(path)
            raise RunDirectoryRefused(
                f"{run_dir} is in use by {holder} (it holds {path}), and two processes writing one run directory "
                f"would interleave its logs and overwrite each other's checkpoints and summary. Wait for that run to "
                f"end, or stop it{f' (kill {holder.split()[-1]})' if holder.startswith('process ') else ''}, then "
                f"try again."
            ) from None
        if self._writable:
            os.ftruncate(self._fd, 0)
            os.write(self._fd, f"{os.getpid()}\n".encode())

    def release(self) -> None:
        """Lets another process take the directory (closing the file releases the flock)."""
        if self._fd is not None:
            if self._writable:
                os.ftruncate(self._fd, 0)  # no pid of a process that no longer holds it
            os.close(self._fd)
            self._fd = None

    def __enter__(self) -> "RunDirectoryLock":
        return self

    def __exit__(self, *exc) -> None:
        self.release()


def _lock_holder(path: str) -> str:
    """'process <pid>' as the lock file names it; 'another process' while the holder is still writing its pid."""
    try:
        with open(path) as f:
            pid = f.read().strip()
    except OSError:
        pid = ""
    return f"process {pid}" if pid.isdigit() else "another process"


def record_failure(run_dir: Optional[str], name: str, what: str, error: BaseException) -> Dict[str, Any]:
    """Reports that `what` failed with `error`: on stderr, and as `<run_dir>/failures/<name>.txt` (`what`, then the
    traceback). Returns the summary's record of it: {"name", "what", "error", "file"}.

    A failure file that cannot be written (a run directory gone read-only) is said on stderr; `file` is then None,
    and the record still reaches the summary printed on the terminal.
    """
    text = f"{what}\n\n" + "".join(traceback.format_exception(type(error), error, error.__traceback__))
    print(f"[acmelike] {what}: {type(error).__name__}: {error}\n{text}", file=sys.stderr, flush=True)
    path = write_failure_file(run_dir, name, text) if run_dir else None
    return {"name": name, "what": what, "error": f"{type(error).__name__}: {error}", "file": path}


def write_failure_file(run_dir: str, name: str, text: str) -> Optional[str]:
    """Writes `text` as `<run_dir>/failures/<name>.txt` and returns its path; None, said on stderr, if the run
    directory will not take it (read-only, full): the failure still reaches the summary."""
    path = os.path.join(run_dir, FAILURES_DIR, f"{name}.txt")
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(text)
    except OSError as write_error:
        print(f"[acmelike] could not write the failure file under {run_dir}: {write_error}", file=sys.stderr,
              flush=True)
        return None
    return path


@dataclasses.dataclass(frozen=True)
class RunOptions:
    """How a run is launched, kept and watched (beside the experiment itself).

    Attributes:
      checkpoint_every_minutes: minutes between checkpoints (also one at every clean stop); None: none.
      tensorboard: also write TensorBoard event files under `<run_dir>/tensorboard/`.
      resume: continue from the run directory's latest checkpoint (a fresh start if it has none yet).
      launch, actors: the runner (`--launch`; "offline" for a run of an `OfflineExperimentConfig`, from --dataset or
        `launch.train`) and a distributed program's actor nodes, so `--resume` relaunches the run as it was launched.
      bind_address: the address the run's servers listen on (`launch.engines.bind_address`); None: 127.0.0.1, or,
        joining a Ray cluster, the address this machine reaches it from. `--resume` does not take it from the
        saved run: only a command line opens a port beyond this machine.
    """

    checkpoint_every_minutes: Optional[float] = DEFAULT_CHECKPOINT_MINUTES
    tensorboard: bool = False
    resume: bool = False
    launch: str = "single"
    actors: int = 1
    bind_address: Optional[str] = None

    def __post_init__(self):
        if self.bind_address is not None:
            check_address(self.bind_address)
        if self.checkpoint_every_minutes is not None and not self.checkpoint_every_minutes > 0:
            raise ValueError(
                f"--checkpoint-every must be > 0 minutes (got {self.checkpoint_every_minutes}); omit it for the "
                f"default of {DEFAULT_CHECKPOINT_MINUTES}."
            )


def run_identity(config) -> dict:
    """What must agree between a checkpoint and the run resuming it: agent, environment, seed and agent config."""
    return {
        "agent": config.agent,
        "env": config.environment,
        "seed": config.seed,
        "agent_config": dataclasses.asdict(config.agent_config),
    }


def check_run_directory(config, options: RunOptions) -> None:
    """Refuses, before anything is written, a run directory that holds another run (CheckpointError naming it).

    Without `resume`, a directory that already has checkpoints is refused (resume it, or pick another). With
    `resume`, the checkpoint's agent, environment, seed and agent config must equal this run's.
    """
    directory = os.path.join(config.run_dir, CHECKPOINTS)
    latest = latest_checkpoint(directory)
    if latest is None:
        return
    if not options.resume:
        raise CheckpointError(
            f"{config.run_dir} already holds checkpoints of a run ({latest}). Continue it with "
            f"`python -m launch --resume {config.run_dir}` (from Python: launch.train(config, resume=True)), start "
            f"it over with --overwrite (launch.train(config, overwrite=True)), or choose a new --run-dir."
        )

    # The checkpoint a resume goes on from is the newest that reads back whole (`resumable_checkpoint`, when the
    # run starts): its identity is checked here, so a newest checkpoint whose metadata is damaged does not refuse
    # the resume that would fall back past it. Sizes only: the run reads every byte once, later.
    def readable_metadata(path: str) -> dict:
        verify_checkpoint(path, read_all=False)
        return read_metadata(path)

    path, _ = newest_checkpoint_passing(directory, readable_metadata)
    check_metadata(path, readable_metadata(path), run_identity(config))


def write_run_options(run_dir: str, options: RunOptions) -> None:
    """`<run_dir>/run_options.json`: read by `--resume`, and by a distributed program's nodes (`node_logger`)."""
    os.makedirs(run_dir, exist_ok=True)
    files.write_json(os.path.join(run_dir, RUN_OPTIONS), dataclasses.asdict(dataclasses.replace(options, resume=False)))


def read_run_options(run_dir: str) -> RunOptions:
    """The run's `RunOptions` (the defaults if it has no run_options.json); CheckpointError naming the file, and
    the key, if it is corrupt, holds a key RunOptions lacks, or a value RunOptions refuses."""
    path = os.path.join(run_dir, RUN_OPTIONS)
    if not os.path.exists(path):
        return RunOptions()
    known = ", ".join(field.name for field in dataclasses.fields(RunOptions))
    try:
        with open(path) as f:
            saved = json.load(f)
    except json.JSONDecodeError as error:
        raise CheckpointError(f"Cannot resume {run_dir}: {path} is corrupt ({error}); restore it (an object of "
                              f"{known}).") from None
    if not isinstance(saved, dict):
        raise CheckpointError(f"Cannot resume {run_dir}: {path} holds a {type(saved).__name__}, not an object of "
                              f"{known}; restore it.")
    unknown = sorted(set(saved) - {field.name for field in dataclasses.fields(RunOptions)})
    if unknown:
        raise CheckpointError(
            f"Cannot resume {run_dir}: {path} has the unknown key(s) {', '.join(map(repr, unknown))} (a run's "
            f"options are {known}). Remove them from the file, then resume again."
        )
    try:
        return RunOptions(**saved)
    except ValueError as error:
        raise CheckpointError(f"Cannot resume {run_dir}: {path}: {error}") from None


def write_config(config) -> None:
    """Writes `<run_dir>/config.json`: the experiment's names, settings and resolved agent config, which
    `resume_arguments` reads back. An offline run's (an `OfflineExperimentConfig`) names its `dataset`, which marks
    it offline, and its learner-step budget; an online run's its actor-step budget, `num_envs`, `inference`, `replay`,
    `preset` and `action_repeat`."""
    data = {
        "agent": config.agent,
        "env": config.environment,
        "seed": config.seed,
        "evaluation_every": config.evaluation_every,
        "num_evaluation_episodes": config.num_evaluation_episodes,
        "target_return": config.target_return,
        "return_window": config.return_window,
        "stop_at_average_return": config.stop_at_average_return,
    }
    if isinstance(config, OfflineExperimentConfig):
        data.update(dataset=config.dataset, max_num_learner_steps=config.max_num_learner_steps)
    else:
        data.update(max_num_actor_steps=config.max_num_actor_steps, num_envs=config.num_envs,
                    inference=config.inference, replay=config.replay, preset=config.preset,
                    action_repeat=config.action_repeat)
        if config.agent_reference is not None:  # an agent of your own: where it lives, never imported from here
            data["agent_reference"] = config.agent_reference
    data["agent_config"] = config.agent_config_dict()
    os.makedirs(config.run_dir, exist_ok=True)
    files.write_json(os.path.join(config.run_dir, CONFIG_FILE), data)


RESUMED_FILE = "resumed.json"  # what a resumed run restored, for people and tests


def record_resume(run_dir: str, label: str, resumed: Dict[str, Any], learner_state_steps: Optional[int]) -> None:
    """Writes `<run_dir>/resumed.json` and prints it: `resumed` (the checkpoint, its step, the counts and replay
    sizes restored) plus `learner_state_steps`, the restored learner's `core.Learner.state_steps()` (left out where
    it is None: e.g. independent learners, one state per policy)."""
    steps = {} if learner_state_steps is None else {"learner_state_steps": learner_state_steps}
    record = dict(resumed, **steps)
    files.write_json(os.path.join(run_dir, RESUMED_FILE), record)
    print(f"[{label}] resumed: {json.dumps(record)}", flush=True)


def resume_arguments(run_dir: str) -> dict:
    """Keyword arguments that rebuild the run in `run_dir` from its config.json: `make_experiment_config`'s, or,
    for an offline run (its config.json names a `dataset`, and so do these arguments),
    `make_offline_experiment_config`'s. CheckpointError naming the file if it is missing or incomplete, and for a
    run of an agent of your own (`agent_reference`), which only your script can rebuild."""
    path = os.path.join(run_dir, CONFIG_FILE)
    try:
        with open(path) as f:
            saved = json.load(f)
    except FileNotFoundError:
        raise CheckpointError(f"Cannot resume {run_dir}: {path} is missing (is this a run directory?).") from None
    except json.JSONDecodeError as error:
        raise CheckpointError(f"Cannot resume {run_dir}: {path} is corrupt ({error}).") from None
    if isinstance(saved, dict) and saved.get("agent_reference"):
        raise CheckpointError(own_agent_resume_message(run_dir, saved.get("agent"), saved["agent_reference"]))
    try:
        arguments = dict(
            agent=saved["agent"], environment=saved["env"], seed=saved["seed"], run_dir=run_dir,
            evaluation_every=saved["evaluation_every"], stop_at_average_return=saved["stop_at_average_return"],
            return_window=saved["return_window"],
            # written as "threshold" before 2026-11-29
            target_return=saved["target_return"] if "target_return" in saved else saved["threshold"],
            config_overrides=assignments(saved["agent_config"]),
        )
        if saved.get("dataset"):
            arguments.update(dataset=saved["dataset"], max_num_learner_steps=saved["max_num_learner_steps"],
                             num_evaluation_episodes=saved["num_evaluation_episodes"])
        else:  # run directories written before num_envs, inference, replay, preset and action_repeat were recorded
            # had the defaults
            arguments.update(max_num_actor_steps=saved["max_num_actor_steps"], num_envs=saved.get("num_envs", 1),
                             inference=saved.get("inference", "local"), replay=saved.get("replay", "reverb"),
                             preset=saved.get("preset"), action_repeat=saved.get("action_repeat", 1))
        return arguments
    except KeyError as error:
        raise CheckpointError(f"Cannot resume {run_dir}: {path} has no field {error}.") from None


def own_agent_resume_message(run_dir: str, agent: str, reference: str) -> str:
    """Why a run of an agent of your own (not in `launch.registry`) is resumed from Python, passing its definition
    again: the run directory says where it lives (`reference`), and a file never chooses code to import."""
    return (
        f"Cannot resume {run_dir} from its directory alone: its agent {agent!r} is your own ({reference}, as "
        f"{os.path.join(run_dir, 'config.json')} records it), and nothing read from a run directory is imported. "
        f"Resume it from your script, passing the definition again: config = launch.make_experiment_config("
        f"agent=<{reference}>, ..., run_dir={run_dir!r}); launch.train(config, resume=True, launch=..., actors=...) "
        f"(docs/tutorial.md, 'Run it as a distributed program')."
    )
