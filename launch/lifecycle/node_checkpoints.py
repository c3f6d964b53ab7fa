"""How the nodes of a distributed program checkpoint a run and carry on from it, under any engine.

The learner node takes the run's checkpoints, in a single-process run's layout (`acmelike.checkpointing`,
`<run_dir>/checkpoints/<actor step>/`): its training state, the counter node's counts and, through Reverb's own
checkpointing, the replay. Every node restores its own part when it is built and the run directory already holds
a checkpoint, so a program launched with `--resume` and a node its engine restarts after a crash (Ray's
max_restarts) both carry on from the latest checkpoint:

    replay node    its Reverb server starts from the checkpoint's replay     ReplayCheckpointing
                   (a node serving the local replay's tables restores it     replay_node.ReplayNode)
    counter node   the checkpoint's counts                                   restored_counter
    learner node   its training state; then a checkpoint every N minutes     LearnerCheckpoints
    actor nodes    their own state (exploration clock, RNG)                  ActorCheckpoints (checkpoints/actors/)

Whether a run directory may be resumed (same agent and config) is the launcher's check, made before any node
starts (`launch.lifecycle.checkpoints.RunLifecycle`).

When: every `checkpoint_every_minutes` (`<run_dir>/run_options.json`), between two learner steps, when the
program ends itself (the node ending it asks the learner first, while every node is still up), and when a signal
stops it (the launcher asks the learner before its engine stops the nodes: `supervisor.checkpoint_before_stopping`).
A killed program, or one a failed node stopped, keeps its latest periodic checkpoint.
Actors go on inserting while the learner saves: the replay is checkpointed a moment after the counts are read, so
it may hold a few items more than the counts say (its recorded size is read from the replay checkpoint itself).
"""

import os
import threading
from typing import Optional

from acmelike import core
from acmelike.checkpointing import (
    Checkpointer,
    check_metadata,
    latest_checkpoint,
    read_json_state,
    read_metadata,
    replay_sizes,
)
from acmelike.counting import Counter
from launch.lifecycle.logs import log_sizes
from launch.lifecycle.checkpoints import replay_size_reader
from launch.lifecycle.replay_checkpoints import make_replay_checkpointer
from launch.lifecycle.run_directory import (
    CHECKPOINTS, latest_run_checkpoint, read_run_options, record_resume, run_identity,
)
from launch.lifecycle.snapshots import save_run_snapshot

ACTORS = "actors"  # <run_dir>/checkpoints/actors/actor_<i>/: each actor's own checkpoints


def _checkpoint_minutes(run_dir: Optional[str]) -> Optional[float]:
    return read_run_options(run_dir).checkpoint_every_minutes if run_dir else None


class ReplayCheckpointing:
    """The replay node's Reverb checkpointer, built in the node's process (picklable): the server starts from the
    latest checkpoint's replay, if the run has one, and writes the replay checkpoints the learner asks for."""

    def __init__(self, config):
        self._run_dir = config.run_dir

    def __call__(self):
        return make_replay_checkpointer(self._run_dir, latest_run_checkpoint(self._run_dir))


def restored_counter(config) -> Counter:
    """The counter node's root counter: it counts on from the latest checkpoint's counts, if the run has one."""
    counter = Counter(time_delta=0.0)
    latest = latest_run_checkpoint(config.run_dir)
    if latest is not None:
        check_metadata(latest, read_metadata(latest), run_identity(config))
        counter.restore(read_json_state(latest, "counter"))
    return counter


class _CounterNodeCounts(core.Saveable):
    """The counter node's counts, as a checkpoint holds them: fetched by `fetch()` just before the save, so the
    checkpoint's step (its actor steps) and its counts are the same numbers."""

    def __init__(self, counter):
        self._counter = counter
        self._counts: Optional[dict] = None

    def fetch(self) -> dict:
        self._counts = dict(self._counter.save())
        return self._counts

    def current(self) -> dict:
        return dict(self._counter.get_counts())

    def save(self) -> dict:
        return self._counts

    def restore(self, state: dict) -> None:
        self._counter.restore(state)


class LearnerCheckpoints:
    """The learner node's side: restores the training state when built, then checkpoints the run.

    Args:
      config: the experiment (`config.run_dir` holds the checkpoints; none without it).
      learner: the node's learner (`core.Saveable`).
      learner_counter: the learner's child counter, flushed before each save so the counts include its steps.
      counter: a handle of the counter node (its `save()`/`restore()`).
      replay: a client of the replay node (a `reverb.Client`, or a `RemoteReplay` of a node serving the local
        replay's tables; on the same filesystem: its checkpoint is moved into ours).
      environment_spec: for the snapshot written with every checkpoint.
    """

    def __init__(self, config, learner, learner_counter: Counter, counter, replay, environment_spec):
        self._config, self._learner, self._spec = config, learner, environment_spec
        self._learner_counter = learner_counter
        self._counts = _CounterNodeCounts(counter)
        self._replay = replay
        self._lock = threading.Lock()  # a save never runs beside a learner step
        run_dir, minutes = config.run_dir, _checkpoint_minutes(config.run_dir)
        self._checkpointer = None
        if run_dir and minutes is not None:
            self._checkpointer = Checkpointer(
                os.path.join(run_dir, CHECKPOINTS), {"learner": learner, "counter": self._counts},
                metadata=run_identity(config), replay_client=replay, read_replay_sizes=replay_size_reader(replay),
                every_minutes=minutes,
            )
        self.restored_step = self._restore()

    @property
    def lock(self) -> threading.Lock:
        """Held by the learner node around each learner step."""
        return self._lock

    def _restore(self) -> Optional[int]:
        latest = latest_run_checkpoint(self._config.run_dir)
        if latest is None:
            return None
        restorer = self._checkpointer or Checkpointer(
            os.path.join(self._config.run_dir, CHECKPOINTS), {"learner": self._learner},
            metadata=run_identity(self._config),
        )
        step = restorer.restore(latest, names=["learner"])
        # Actors write nothing before they have the learner's parameters, which it serves once built: the replay
        # and the counts read here are what the other nodes restored.
        resumed = {"checkpoint": latest, "step": step, "counts": self._counts.current(),
                   "replay_sizes": replay_sizes(self._replay)}
        record_resume(self._config.run_dir, "learner", resumed, self._learner.state_steps())
        return step

    def save_if_due(self) -> Optional[str]:
        if self._checkpointer is None or not self._checkpointer.due():
            return None
        return self.save()

    def save(self) -> Optional[str]:
        """Checkpoints the run now (with a snapshot of the policy); returns the checkpoint's path."""
        if self._checkpointer is None:
            return None
        with self._lock:
            self._learner.save()  # finishes the updates in flight, so their counts are in what is fetched next
            self._learner_counter.flush()
            step = int(self._counts.fetch().get("actor_steps", 0))
            path = self._checkpointer.save(step, logs=log_sizes(self._config.run_dir))
            save_run_snapshot(self._config, self._learner, self._spec, step)
        return path


class ActorCheckpoints:
    """An actor node's own state (exploration clock, RNG) under `checkpoints/actors/actor_<index>/`: restored
    when built if the run has a checkpoint, saved every N minutes and when the actor stops. Not taken at the
    learner's moments: an actor restored a little ahead of the run's checkpoint explores a little less, which is
    harmless."""

    def __init__(self, config, index: int, actor):
        self._checkpointer = None
        minutes = _checkpoint_minutes(config.run_dir)
        if minutes is None or not isinstance(actor, core.Saveable):
            return
        directory = os.path.join(config.run_dir, CHECKPOINTS, ACTORS, f"actor_{index}")
        self._checkpointer = Checkpointer(directory, {"actor": actor}, every_minutes=minutes)
        if latest_run_checkpoint(config.run_dir) is not None and latest_checkpoint(directory) is not None:
            self._checkpointer.restore()

    def after_episode(self, actor_steps: int) -> None:
        if self._checkpointer is not None:
            self._checkpointer.save_if_due(actor_steps)

    def save(self, actor_steps: int) -> None:
        if self._checkpointer is not None:
            self._checkpointer.save(actor_steps)
