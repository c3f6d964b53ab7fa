"""A run directory: how the run was launched, what identifies it, and whether it may be written or resumed.

    <run_dir>/config.json          the resolved experiment (experiments.summaries.write_config)
    <run_dir>/run_options.json     how it was launched (RunOptions), so `--resume RUN_DIR` needs no flags
    <run_dir>/checkpoints/<step>/  checkpoints (lifecycle.checkpoints, lifecycle.node_checkpoints)
    <run_dir>/snapshots/<step>/    evaluation-policy snapshots (lifecycle.snapshots)
    <run_dir>/failures/<node>.txt  what failed, and why (a node, or a final save)
    <run_dir>/*.csv, tensorboard/  logs (lifecycle.logs)
"""

import dataclasses
import json
import os
import shutil
from typing import Any, Optional

from acmelike.checkpointing import CheckpointError, latest_checkpoint

CHECKPOINTS, RUN_OPTIONS = "checkpoints", "run_options.json"
DEFAULT_CHECKPOINT_MINUTES = 10.0


def latest_run_checkpoint(run_dir: Optional[str]) -> Optional[str]:
    """The run's newest complete checkpoint, or None (also without a run directory)."""
    return latest_checkpoint(os.path.join(run_dir, CHECKPOINTS)) if run_dir else None


def prepare_new_run_dir(run_dir: str, overwrite: bool) -> None:
    """A new run's directory must be a directory, and an earlier run's files are replaced only with `overwrite`
    (ValueError naming the directory and what it holds otherwise)."""
    if os.path.exists(run_dir) and not os.path.isdir(run_dir):
        raise ValueError(f"--run-dir {run_dir} is a file, not a directory: choose a directory path.")
    if os.path.isdir(run_dir) and os.listdir(run_dir):
        if not overwrite:
            held = ", ".join(sorted(os.listdir(run_dir))[:6])
            raise ValueError(
                f"--run-dir {run_dir} is not empty (it holds {held}, ...): choose a new directory, or pass "
                f"--overwrite to replace its contents."
            )
        shutil.rmtree(run_dir)


@dataclasses.dataclass(frozen=True)
class RunOptions:
    """How a run is launched, kept and watched (beside the experiment itself).

    Attributes:
      checkpoint_every_minutes: minutes between checkpoints (also one at every clean stop); None: none.
      tensorboard: also write TensorBoard event files under `<run_dir>/tensorboard/`.
      resume: continue from the run directory's latest checkpoint (a fresh start if it has none yet).
      launch, actors: the runner (`--launch`) and a distributed program's actor nodes, so `--resume` relaunches
        the run as it was launched.
    """

    checkpoint_every_minutes: Optional[float] = DEFAULT_CHECKPOINT_MINUTES
    tensorboard: bool = False
    resume: bool = False
    launch: str = "single"
    actors: int = 1

    def __post_init__(self):
        if self.checkpoint_every_minutes is not None and not self.checkpoint_every_minutes > 0:
            raise ValueError(
                f"--checkpoint-every must be > 0 minutes (got {self.checkpoint_every_minutes}); omit it for the "
                f"default of {DEFAULT_CHECKPOINT_MINUTES}."
            )


def run_identity(config) -> dict:
    """What must agree between a checkpoint and the run resuming it: agent, environment, seed and agent config."""
    return {
        "agent": config.agent_name,
        "env": config.environment_name,
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
            f"`python -m launch --resume {config.run_dir}`, or choose a new --run-dir."
        )
    from acmelike.checkpointing import check_metadata, read_metadata

    check_metadata(latest, read_metadata(latest), run_identity(config))


def write_run_options(run_dir: str, options: RunOptions) -> None:
    """`<run_dir>/run_options.json`: read by `--resume`, and by a distributed program's nodes (`node_logger`)."""
    os.makedirs(run_dir, exist_ok=True)
    with open(os.path.join(run_dir, RUN_OPTIONS), "w") as f:
        json.dump(dataclasses.asdict(dataclasses.replace(options, resume=False)), f, indent=2)


def read_run_options(run_dir: str) -> RunOptions:
    path = os.path.join(run_dir, RUN_OPTIONS)
    if not os.path.exists(path):
        return RunOptions()
    with open(path) as f:
        return RunOptions(**json.load(f))


def _override(value: Any) -> str:
    """A config value as `--config` text (launch.experiments.overrides parses it back to the field's type)."""
    if isinstance(value, (list, tuple)):
        return ",".join(str(item) for item in value)
    return "none" if value is None else repr(value) if isinstance(value, float) else str(value)


def resume_arguments(run_dir: str) -> dict:
    """`make_experiment_config` keyword arguments that rebuild the run in `run_dir` from its config.json."""
    path = os.path.join(run_dir, "config.json")
    try:
        with open(path) as f:
            saved = json.load(f)
    except FileNotFoundError:
        raise CheckpointError(f"Cannot resume {run_dir}: {path} is missing (is this a run directory?).") from None
    except json.JSONDecodeError as error:
        raise CheckpointError(f"Cannot resume {run_dir}: {path} is corrupt ({error}).") from None
    try:
        return dict(
            agent=saved["agent"], environment=saved["env"], seed=saved["seed"], run_dir=run_dir,
            max_num_actor_steps=saved["max_num_actor_steps"], evaluation_every=saved["evaluation_every"],
            stop_at_average_return=saved["stop_at_average_return"], return_window=saved["return_window"],
            config_overrides=[f"{key}={_override(value)}" for key, value in saved["agent_config"].items()],
        )
    except KeyError as error:
        raise CheckpointError(f"Cannot resume {run_dir}: {path} has no field {error}.") from None
