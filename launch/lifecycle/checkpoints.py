"""RunLifecycle: what a one-process runner calls to make a run survive being killed, and to leave a policy behind.

    lifecycle = RunLifecycle(config, RunOptions(checkpoint_every_minutes=1.0, resume=True))   # checks the run dir
    server = reverb.Server(tables, port=None, checkpointer=lifecycle.replay_checkpointer())
    ... build learner, actor, counter, tracker ...
    lifecycle.start(learner=..., actors={"actor": actor}, counter=counter, tracker=tracker, replay_client=client,
                    environment_spec=spec)         # restores them when resuming
    while training: ...; lifecycle.save_if_due(steps)       # checkpoint (+ snapshot) every N minutes
    failures = lifecycle.finish(steps)             # at a clean stop: checkpoint + snapshot; summary["failures"]
    lifecycle.write_summary(summary, plot)         # summary.json and the learning curve

The same serves an offline run (`launch.engines.offline`: no actors, no replay, steps are learner steps).

Under `<run_dir>`: `checkpoints/<step>/` (acmelike.checkpointing), `snapshots/<step>/` (lifecycle.snapshots),
`run_options.json` (lifecycle.run_directory) and `tensorboard/` (lifecycle.logs). A distributed program's nodes
checkpoint the same layout (lifecycle.node_checkpoints).
"""

import os
import sys
from typing import Any, Callable, Dict, List, Mapping, Optional

from acmelike.checkpointing import Checkpointer, checkpoint_step, read_metadata, readable_checkpoint, replay_sizes
from acmelike.replay import LocalFormatReplay
from launch.experiments.summaries import write_summary
from launch.lifecycle.logs import log_sizes, read_counts, run_logger, truncate_logs
from launch.lifecycle.replay_checkpoints import checkpoint_replay_sizes, make_replay_checkpointer, replay_directory
from launch.lifecycle.run_directory import (
    CHECKPOINTS,
    RunOptions,
    check_run_directory,
    record_failure,
    record_resume,
    run_identity,
    write_run_options,
)
from launch.lifecycle.snapshots import save_run_snapshot


def resumable_checkpoint(run_dir: str, label: str = "acmelike") -> Optional[str]:
    """The checkpoint a resume of `run_dir` goes on from: the newest that reads back whole
    (`acmelike.checkpointing.readable_checkpoint`), saying on stderr which newer ones it skipped, and why; None if
    the run has none. CheckpointError naming each checkpoint's fault if none reads."""
    path, skipped = readable_checkpoint(os.path.join(run_dir, CHECKPOINTS))
    for line in skipped:
        print(f"[{label}] --resume: {line}", file=sys.stderr, flush=True)
    if skipped:
        print(f"[{label}] --resume: going on from {path}", file=sys.stderr, flush=True)
    return path


def replay_size_reader(replay_client) -> Optional[Callable[[str], Mapping[str, int]]]:
    """How to read {table: items} out of the replay part of a checkpoint `replay_client` wrote: the local replay's
    format for a `LocalFormatReplay` (a `LocalReplay`, or a replay node's `RemoteReplay`), else Reverb's (a
    `reverb.Client`); None without a replay."""
    if replay_client is None:
        return None
    if isinstance(replay_client, LocalFormatReplay):
        return replay_client.checkpoint_sizes
    return checkpoint_replay_sizes


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
        self._resume_from: Optional[str] = None
        if self.enabled:
            if self.checkpointing and options.resume:
                self._resume_from = resumable_checkpoint(config.run_dir, config.agent)
            check_run_directory(config, options)
            write_run_options(config.run_dir, options)
            if self.resuming:  # only now, with the checkpoint read back whole, are the logs cut back to it
                latest = self._resume_from
                truncate_logs(config.run_dir, read_metadata(latest).get("logs", {}), read_counts(latest))

    @property
    def checkpointing(self) -> bool:
        return self.enabled and self.options.checkpoint_every_minutes is not None

    @property
    def resuming(self) -> bool:
        """Whether this run continues from a checkpoint (the loggers then append to the run's CSV files)."""
        return self._resume_from is not None

    @property
    def resume_step(self) -> Optional[int]:
        """The step of the checkpoint `start` will restore (None: a fresh start), known before anything is built."""
        return checkpoint_step(self._resume_from) if self.resuming else None

    # Replay.

    def replay_checkpointer(self):
        """The Reverb checkpointer for the run's server: it loads the latest checkpoint's replay when resuming.

        None when not checkpointing (Reverb then uses a temporary directory).
        """
        if not self.checkpointing:
            return None
        return make_replay_checkpointer(self.config.run_dir, self._resume_from if self.resuming else None)

    def replay_to_restore(self) -> Optional[str]:
        """The replay directory of the checkpoint a resumed run restores (None for a fresh start), for a replay
        that restores itself (`LocalReplay.restore`); a Reverb server gets it through `replay_checkpointer`."""
        return replay_directory(self._resume_from) if self.resuming else None

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

    def logger(self, label: str, step_key: Optional[str] = None, terminal_period_s: Optional[float] = None):
        """The run's logger for `label` (`launch.lifecycle.logs.run_logger`): its CSV file, continued when resuming;
        TensorBoard (x-axis `step_key`) with --tensorboard; terminal lines every `terminal_period_s` (None: none)."""
        return run_logger(self.config.run_dir, label, step_key, append=self.resuming,
                          tensorboard=self.enabled and self.options.tensorboard,
                          resumed_at=read_counts(self._resume_from) if self.resuming else None,
                          terminal_period_s=terminal_period_s)

    # Checkpoints.

    def start(self, *, learner, actors: Mapping[str, Any], counter, tracker=None, replay_client=None,
              environment_spec=None) -> Optional[int]:
        """Registers what checkpoints hold and, when resuming, restores it; returns the restored step (or None).

        `tracker` is what the run's summary is built from (any `core.Saveable`: episode returns, or an offline
        run's evaluation rounds); `actors` may be empty and `replay_client` None (an offline run).
        """
        self._learner, self._spec = learner, environment_spec
        if not self.checkpointing:
            return None
        objects = {"learner": learner, "counter": counter, **{f"actor_{k}": v for k, v in actors.items()}}
        if tracker is not None:
            objects["tracker"] = tracker
        self._checkpointer = Checkpointer(
            os.path.join(self.config.run_dir, CHECKPOINTS), objects, metadata=run_identity(self.config),
            replay_client=replay_client, read_replay_sizes=replay_size_reader(replay_client),
            every_minutes=self.options.checkpoint_every_minutes,
        )
        if self.resuming:
            self.restored_step = self._checkpointer.restore(self._resume_from)
            resumed = {"checkpoint": self._resume_from, "step": self.restored_step, "counts": counter.get_counts()}
            if replay_client is not None:
                resumed["replay_sizes"] = replay_sizes(replay_client)
            record_resume(self.config.run_dir, self.config.agent, resumed, learner.state_steps())
        return self.restored_step

    def save_if_due(self, step: int) -> None:
        """Checkpoints (with a snapshot) if `checkpoint_every_minutes` have passed."""
        if self._checkpointer is not None and self._checkpointer.save_if_due(step, logs=self._log_sizes()):
            self.snapshot(step)

    def finish(self, step: int) -> List[Dict[str, Any]]:
        """At a clean stop: a checkpoint and a snapshot (a snapshot alone when not checkpointing).

        Returns the failures for the summary's `failures`: none, or the final save's, which is also written to
        `<run_dir>/failures/final_save.txt` with its traceback (`record_failure`) instead of raised, so the run's
        summary is still written and printed; the command line then exits 1.
        """
        try:
            if self._checkpointer is not None:
                self._checkpointer.save(step, logs=self._log_sizes())
            self.snapshot(step)
        except Exception as error:  # noqa: BLE001 - recorded and reported in the summary, never lost
            return [record_failure(self.config.run_dir, "final_save",
                                   f"the final save (checkpoint and snapshot at step {step}) failed", error)]
        return []

    def write_summary(self, summary: Dict[str, Any], plot: Callable[[], Any]) -> None:
        """Writes `<run_dir>/summary.json` and the learning curve (`plot()`). If the run directory will not take
        them (gone read-only, full), that failure joins `summary["failures"]` instead of losing the summary, which
        the command line still prints."""
        if not self.enabled:
            return
        try:
            write_summary(self.config.run_dir, summary)
            plot()
        except OSError as error:
            summary["failures"].append(record_failure(
                self.config.run_dir, "summary", "writing summary.json and the learning curve failed", error))

    def _log_sizes(self) -> dict:
        return log_sizes(self.config.run_dir)

    def snapshot(self, step: int) -> Optional[str]:
        """Saves the evaluation policy's current parameters as `<run_dir>/snapshots/<step>/`."""
        if not self.enabled or self._learner is None or self._spec is None:
            return None
        return save_run_snapshot(self.config, self._learner, self._spec, step)
