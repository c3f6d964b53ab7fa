"""RunLifecycle: what a runner calls to make a run survive being killed, and to leave a policy behind.

    lifecycle = RunLifecycle(config, RunOptions(checkpoint_every_minutes=1.0, resume=True))   # checks the run dir
    server = reverb.Server(tables, port=None, checkpointer=lifecycle.replay_checkpointer())
    ... build learner, actor, counter, tracker ...
    lifecycle.start(learner=..., actors={"actor": actor}, counter=counter, tracker=tracker, replay_client=client,
                    environment_spec=spec)         # restores them when resuming
    while training: ...; lifecycle.after_episode(steps)     # checkpoint (+ snapshot) every N minutes
    lifecycle.finish(steps)                        # at a clean stop: checkpoint + snapshot

Under `<run_dir>`: `checkpoints/<step>/` (acmelike.checkpointing), `snapshots/<step>/` (acmelike.snapshots),
`run_options.json` (how the run was launched, so `--resume RUN_DIR` needs no flags) and `tensorboard/`.
Only `launch/` may import Reverb, so the replay's checkpointer is built here.
"""

import dataclasses
import json
import os
import shutil
from typing import Any, Mapping, Optional

from acmelike.checkpointing import (
    REPLAY,
    CheckpointError,
    Checkpointer,
    latest_checkpoint,
    read_json_state,
    read_metadata,
    replay_sizes,
)
from acmelike.snapshots import save_snapshot

CHECKPOINTS, REPLAY_STAGING, RUN_OPTIONS = "checkpoints", "replay_staging", "run_options.json"
DEFAULT_CHECKPOINT_MINUTES = 10.0


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


class _RestoredTable:
    """See `RunLifecycle.sampleable_tables`."""

    def can_sample(self, num_samples: int) -> bool:
        return False


class RunLifecycle:
    """Checkpoints, resume, snapshots and TensorBoard for one run; inert without `config.run_dir`."""

    def __init__(self, config, options: RunOptions = RunOptions()):
        self.config = config
        self.options = options
        self.enabled = bool(config.run_dir)
        self._checkpointer: Optional[Checkpointer] = None
        self._learner = None
        self._spec = None
        self.restored_step: Optional[int] = None
        if self.enabled:
            check_run_directory(config, options)
            write_run_options(config.run_dir, options)
            if self.resuming:
                latest = self._latest()
                _truncate_logs(config.run_dir, read_metadata(latest).get("logs", {}), read_counts(latest))

    @property
    def checkpointing(self) -> bool:
        return self.enabled and self.options.checkpoint_every_minutes is not None

    @property
    def resuming(self) -> bool:
        """Whether this run continues from a checkpoint (the loggers then append to the run's CSV files)."""
        return self.checkpointing and self.options.resume and self._latest() is not None

    def _latest(self) -> Optional[str]:
        return latest_checkpoint(os.path.join(self.config.run_dir, CHECKPOINTS))

    # Replay.

    def replay_checkpointer(self):
        """The Reverb checkpointer for the run's server: it loads the latest checkpoint's replay when resuming.

        None when not checkpointing (Reverb then uses a temporary directory).
        """
        if not self.checkpointing:
            return None
        return make_replay_checkpointer(self.config.run_dir, self._latest() if self.resuming else None)

    def sampleable_tables(self, tables) -> dict:
        """{name: table} for the single-process runner's "can the learner step?" check.

        A Reverb server that loads a checkpoint replaces the tables it was given with the loaded ones, which
        Python cannot reach; the given objects stay empty. A resumed run therefore gets tables that never claim
        a batch is coming: the learner then steps whenever the prefetcher holds a batch, and the tables' rate
        limiter still paces sampling, on the server.
        """
        if self.resuming:
            return {table.name: _RestoredTable() for table in tables}
        return {table.name: table for table in tables}

    # Loggers.

    def tensorboard_logger(self, label: str, step_key: Optional[str] = None):
        """A TensorBoardLogger for `label` (None unless --tensorboard); its x-axis is `step_key`."""
        if not (self.enabled and self.options.tensorboard):
            return None
        from acmelike.loggers import TensorBoardLogger

        purge_step = _purge_step(self._latest(), step_key) if self.resuming else None
        return TensorBoardLogger(os.path.join(self.config.run_dir, "tensorboard"), label, step_key=step_key,
                                 purge_step=purge_step)

    # Checkpoints.

    def start(self, *, learner, actors: Mapping[str, Any], counter, tracker=None, replay_client=None,
              environment_spec=None) -> Optional[int]:
        """Registers what checkpoints hold and, when resuming, restores it; returns the restored step (or None)."""
        self._learner, self._spec = learner, environment_spec
        if not self.checkpointing:
            return None
        objects = {"learner": learner, "counter": counter, **{f"actor_{k}": v for k, v in actors.items()}}
        if tracker is not None:
            objects["tracker"] = tracker
        self._checkpointer = Checkpointer(
            os.path.join(self.config.run_dir, CHECKPOINTS), objects, metadata=run_identity(self.config),
            replay_client=replay_client, read_replay_sizes=checkpoint_replay_sizes,
            every_minutes=self.options.checkpoint_every_minutes,
        )
        if self.resuming:
            self.restored_step = self._checkpointer.restore()
            resumed = {"checkpoint": self._latest(), "step": self.restored_step, "counts": counter.get_counts()}
            if replay_client is not None:
                resumed["replay_sizes"] = replay_sizes(replay_client)
            learner_steps = getattr(learner.save(), "steps", None)
            if learner_steps is not None:
                resumed["learner_state_steps"] = int(learner_steps)
            with open(os.path.join(self.config.run_dir, "resumed.json"), "w") as f:
                json.dump(resumed, f, indent=2)
            print(f"[{self.config.agent_name}] resumed: {json.dumps(resumed)}", flush=True)
        return self.restored_step

    def after_episode(self, step: int) -> None:
        """Checkpoints (with a snapshot) if `checkpoint_every_minutes` have passed."""
        if self._checkpointer is not None and self._checkpointer.save_if_due(step, logs=self._log_sizes()):
            self.snapshot(step)

    def finish(self, step: int) -> None:
        """At a clean stop: a checkpoint and a snapshot (a snapshot alone when not checkpointing)."""
        if self._checkpointer is not None:
            self._checkpointer.save(step, logs=self._log_sizes())
        self.snapshot(step)

    def _log_sizes(self) -> dict:
        return log_sizes(self.config.run_dir)

    def snapshot(self, step: int) -> Optional[str]:
        """Saves the evaluation policy's current parameters as `<run_dir>/snapshots/<step>/`."""
        if not self.enabled or self._learner is None or self._spec is None:
            return None
        return save_run_snapshot(self.config, self._learner, self._spec, step)


def make_replay_checkpointer(run_dir: str, resume_from: Optional[str]):
    """A Reverb checkpointer writing under `<run_dir>/checkpoints/replay_staging/` (`Checkpointer.save` moves each
    replay checkpoint into the checkpoint it belongs to); with `resume_from` (a checkpoint's path), the server
    built with it starts from that checkpoint's replay."""
    import reverb

    staging = os.path.join(run_dir, CHECKPOINTS, REPLAY_STAGING)
    shutil.rmtree(staging, ignore_errors=True)  # a Reverb checkpoint a killed save never moved
    os.makedirs(staging)
    fallback = None
    if resume_from is not None:
        fallback = os.path.join(resume_from, REPLAY)
        if not os.path.isdir(fallback):
            raise CheckpointError(f"Checkpoint {resume_from} has no replay ({fallback} is missing).")
    return reverb.checkpointers.DefaultCheckpointer(path=staging, fallback_checkpoint_path=fallback)


def checkpoint_replay_sizes(replay_dir: str) -> dict:
    """{table: items} in the Reverb checkpoint at `replay_dir`, read from its tables file (items inserted minus
    items deleted, as each table's rate limiter counts them): the replay's size at the very moment it was saved,
    even while actors of a distributed program kept inserting."""
    import struct
    import zlib

    from reverb.cc.checkpointing import checkpoint_pb2

    path = os.path.join(replay_dir, "tables.tfrecord")
    try:
        with open(path, "rb") as f:
            data = zlib.decompress(f.read())  # a ZLIB-compressed TFRecord file
    except (OSError, zlib.error) as error:
        raise CheckpointError(f"Cannot read the replay checkpoint's tables {path} ({error}).") from None
    sizes, offset = {}, 0
    while offset + 12 <= len(data):
        (length,) = struct.unpack("<Q", data[offset:offset + 8])
        record = data[offset + 12: offset + 12 + length]  # after the length and its CRC; the record's CRC follows
        offset += 12 + length + 4
        table = checkpoint_pb2.PriorityTableCheckpoint.FromString(record)
        sizes[table.table_name] = int(table.rate_limiter.insert_count - table.rate_limiter.delete_count)
    return sizes


def log_sizes(run_dir: str) -> dict:
    """{csv file: rows} of the run's CSV logs, so a resumed run drops the rows written after the save. Rows, not
    bytes: a log that gains a column after the save is rewritten with a wider header (`CSVLogger`)."""
    import csv

    sizes = {}
    for name in sorted(os.listdir(run_dir)):
        if name.endswith(".csv"):
            with open(os.path.join(run_dir, name), newline="") as f:
                sizes[name] = sum(1 for _ in csv.DictReader(f))
    return sizes


def save_run_snapshot(config, learner, environment_spec, step: int) -> str:
    """Saves `learner`'s "policy" variables as `<run_dir>/snapshots/<step>/`, with what rebuilds the agent."""
    from launch.offline import OFFLINE_AGENTS
    from launch.registry import AGENTS

    (params,) = learner.get_variables(["policy"])
    package = {**AGENTS, **OFFLINE_AGENTS}[config.agent_name]
    return save_snapshot(
        config.run_dir, step=step, params=params, agent=config.agent_name, agent_package=package,
        config=config.agent_config, environment_spec=environment_spec, environment=config.environment_name,
    )


def _truncate_logs(run_dir: str, sizes: Mapping[str, int], counts: Mapping[str, Any]) -> None:
    """Cuts each CSV log back to the checkpoint: to its rows then (rows past them belong to a timeline that was
    lost), and before the first row counting past the checkpoint's `counts` (a distributed program's actor logs
    its own steps before its counter forwards them, so a row written before the checkpoint may count steps the
    checkpoint does not hold)."""
    import csv

    for name, size in sizes.items():
        path = os.path.join(run_dir, name)
        if not os.path.exists(path):
            continue
        with open(path, newline="") as f:
            reader = csv.DictReader(f)
            rows, fieldnames = list(reader)[:size], reader.fieldnames
        if not fieldnames:
            continue
        counted = [key for key in fieldnames or () if key in counts]
        keep = next((index for index, row in enumerate(rows)
                     if any(row[key] and float(row[key]) > counts[key] for key in counted)), len(rows))
        with open(path + ".tmp", "w", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=fieldnames)
            writer.writeheader()
            writer.writerows(rows[:keep])
        os.replace(path + ".tmp", path)


def write_run_options(run_dir: str, options: RunOptions) -> None:
    """`<run_dir>/run_options.json`: read by `--resume`, and by a distributed program's nodes (`node_logger`)."""
    os.makedirs(run_dir, exist_ok=True)
    with open(os.path.join(run_dir, RUN_OPTIONS), "w") as f:
        json.dump(dataclasses.asdict(dataclasses.replace(options, resume=False)), f, indent=2)


def node_logger(run_dir: Optional[str], label: str, step_key: Optional[str] = None):
    """A distributed node's logger: `<run_dir>/<label>.csv`, plus TensorBoard if the run's options ask for it.

    A node built when the run already has a checkpoint (a resumed program, or a node its engine restarted)
    continues the CSV file and hides from TensorBoard what was logged after the checkpoint.
    """
    from acmelike.loggers import CSVLogger, Dispatcher, NoOpLogger, TensorBoardLogger

    if not run_dir:
        return NoOpLogger()
    latest = latest_checkpoint(os.path.join(run_dir, CHECKPOINTS))
    loggers = [CSVLogger(run_dir, label, append=latest is not None)]
    if read_run_options(run_dir).tensorboard:
        purge_step = _purge_step(latest, step_key) if latest is not None else None
        loggers.append(TensorBoardLogger(os.path.join(run_dir, "tensorboard"), label, step_key=step_key,
                                         purge_step=purge_step))
    return Dispatcher(loggers)


def _purge_step(checkpoint: str, step_key: Optional[str]) -> Optional[int]:
    """The first TensorBoard step past `checkpoint` on the `step_key` axis (a count the checkpoint holds)."""
    counts = read_counts(checkpoint)
    return int(counts[step_key]) + 1 if step_key in counts else None


def read_counts(checkpoint: str) -> dict:
    """The counts (actor_steps, learner_steps, ...) saved in `checkpoint`."""
    return read_json_state(checkpoint, "counter")


def read_run_options(run_dir: str) -> RunOptions:
    path = os.path.join(run_dir, RUN_OPTIONS)
    if not os.path.exists(path):
        return RunOptions()
    with open(path) as f:
        return RunOptions(**json.load(f))


def _override(value: Any) -> str:
    """A config value as `--config` text (launch.config_overrides parses it back to the field's type)."""
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
