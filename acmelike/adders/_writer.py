"""What the Reverb adders share: the episode guard, priorities, prompt flushing, and `Step` writing.

Reverb itself is never imported here: the `TrajectoryWriter` comes from the client the caller passes in, and
TensorFlow is imported only inside the `signature` helpers (see DESIGN.md, "lazy, honest imports").
"""

import threading
from typing import Callable, Mapping, Optional, Sequence, Union

import dm_env

import jax
import numpy as np

from acmelike.adders.base import Adder
from acmelike.types import NestedArray, NestedSpec, Step

PriorityFn = Callable[[NestedArray], float]
PriorityFns = Optional[Mapping[str, Optional[PriorityFn]]]


def as_float32(value):
    """Rewards and discounts (possibly nested) are stored as float32, whatever the environment returns."""
    if value is None or isinstance(value, (dict, list, tuple)):
        return jax.tree_util.tree_map(lambda x: np.asarray(x, dtype=np.float32), value)
    return np.asarray(value, dtype=np.float32)  # a leaf: what tree_map would do, without walking a tree


def tensor_spec(spec, dtype=None, time_dim: Union[int, None, str] = "none"):
    """A tf.TensorSpec from a dm_env spec; `time_dim` (an int or None) prepends a time axis unless left "none"."""
    import tensorflow as tf  # lazy: see module docstring

    shape = tuple(spec.shape) if time_dim == "none" else (time_dim, *spec.shape)
    return tf.TensorSpec(shape=shape, dtype=dtype or spec.dtype)


def step_signature(environment_spec, extras_spec: NestedSpec = (), sequence_length: Optional[int] = None) -> Step:
    """The tf.TensorSpec tree of one `Step` item with a leading time axis of `sequence_length` (None: variable)."""
    import tensorflow as tf  # lazy: see module docstring

    def timed(spec):
        return tensor_spec(spec, time_dim=sequence_length)

    def timed_float32(spec):
        return tensor_spec(spec, dtype=tf.float32, time_dim=sequence_length)

    return Step(
        observation=jax.tree_util.tree_map(timed, environment_spec.observations),
        action=jax.tree_util.tree_map(timed, environment_spec.actions),
        reward=jax.tree_util.tree_map(timed_float32, environment_spec.rewards),
        discount=jax.tree_util.tree_map(timed_float32, environment_spec.discounts),
        start_of_episode=tf.TensorSpec(shape=(sequence_length,), dtype=tf.bool),
        extras=jax.tree_util.tree_map(timed, extras_spec),
    )


class AdderInterrupted(RuntimeError):
    """`ReverbAdder.interrupt()` was called while the adder waited for the replay server."""


# Blocking writer calls wait in slices this long, checking for `interrupt()` in between.
_WAIT_SLICE_MS = 200


class ReverbAdder(Adder):
    """Base of the Reverb adders: validates calls, computes priorities, creates items, keeps them flowing.

    Subclasses implement `_begin(timestep)`, `_step(action, next_timestep, extras)` and `_clear()`.
    Every `_create_items` call is followed by `writer.flush(block_until_num_items=max_in_flight_items)`, so at
    most `max_in_flight_items` items per adder wait unconfirmed; the episode end flushes all of them.

    Subclasses append whole rows only (no `partial_step`): one `append` per step is the writer's dominant
    cost, and reverb 0.7.2's `end_episode()` would leave a partial row open for the next episode's first append.
    """

    def __init__(
        self,
        *,
        client,
        table_names: Union[str, Sequence[str]],
        priority_fns: PriorityFns,
        num_keep_alive_refs: int,
        max_in_flight_items: int,
    ):
        name = type(self).__name__
        table_names = (table_names,) if isinstance(table_names, str) else tuple(table_names)
        if not table_names:
            raise ValueError(f"{name} needs at least one table name in table_names, got {table_names!r}.")
        unknown = set(priority_fns or {}) - set(table_names)
        if unknown:
            raise ValueError(
                f"{name}: priority_fns names tables {sorted(unknown)} that are not in table_names {list(table_names)}."
            )
        if max_in_flight_items is not None and max_in_flight_items < 0:
            raise ValueError(f"{name}: max_in_flight_items must be >= 0, got {max_in_flight_items}.")
        self._table_names = table_names
        self._priority_fns = dict(priority_fns or {})
        self._max_in_flight_items = max_in_flight_items
        self._writer = client.trajectory_writer(num_keep_alive_refs=num_keep_alive_refs)
        self._interrupted = threading.Event()
        self._in_episode = False
        self._extras_structure = None

    # The Adder protocol.

    def add_first(self, timestep: dm_env.TimeStep) -> None:
        if not timestep.first():
            raise ValueError(
                f"{type(self).__name__}.add_first expects a first timestep (StepType.FIRST, from dm_env.restart), "
                f"but received step_type {timestep.step_type!r}."
            )
        if self._in_episode:  # the previous episode was cut short: drop it
            self.reset()
        self._begin(timestep)
        self._in_episode = True

    def add(self, action: NestedArray, next_timestep: dm_env.TimeStep, extras: NestedArray = ()) -> None:
        name = type(self).__name__
        if not self._in_episode:
            raise ValueError(
                f"{name}.add was called before add_first: expected add_first(timestep) at the start of every "
                f"episode (also after a last timestep), but received add() with a timestep of step_type "
                f"{next_timestep.step_type!r}."
            )
        if next_timestep.first():
            raise ValueError(f"{name}.add expects a mid-episode or last timestep, but received a first timestep.")
        structure = jax.tree_util.tree_structure(extras)
        if self._extras_structure is None:
            self._extras_structure = structure
        elif structure != self._extras_structure:
            raise ValueError(
                f"{name}: the structure of extras changed: expected {self._extras_structure} (as in the first "
                f"add call), but received {structure}."
            )
        self._step(action, next_timestep, extras)
        if next_timestep.last():
            self._in_episode = False

    def interrupt(self) -> None:
        """Makes a wait for the server (an insert held back by a rate limiter) raise `AdderInterrupted`.

        Safe to call from another thread; a program that is stopping calls it so its actors can exit even when
        the learner no longer samples. The adder is unusable afterwards.
        """
        self._interrupted.set()

    def _flush(self, block_until_num_items: int) -> None:
        """`writer.flush`, waiting in slices so that `interrupt()` can end the wait."""
        while True:
            if self._interrupted.is_set():
                raise AdderInterrupted(f"{type(self).__name__} was interrupted while waiting for the replay server.")
            try:
                self._writer.flush(block_until_num_items=block_until_num_items, timeout_ms=_WAIT_SLICE_MS)
                return
            except Exception as error:  # noqa: BLE001 - only a timed-out slice is retried
                # Imported here, not per call (this runs once per step): adders must not import Reverb eagerly.
                from reverb import errors

                if not isinstance(error, errors.DeadlineExceededError):
                    raise

    def _end_episode(self, clear_buffers: bool) -> None:
        """`writer.end_episode`, interruptible: everything is flushed first, so the call itself does not wait."""
        self._flush(0)
        self._writer.end_episode(clear_buffers=clear_buffers)

    def close(self) -> None:
        """Sends what is pending and closes the writer's stream (a Reverb server waits on open streams when it stops)."""
        self._writer.close()

    def reset(self) -> None:
        """Drops the partial episode; items already created are still sent."""
        self._end_episode(clear_buffers=True)
        self._in_episode = False
        self._clear()

    # Helpers for subclasses.

    def _create_items(self, trajectory) -> None:
        """One item per table referencing `trajectory` (a tree of TrajectoryColumns), then a bounded flush."""
        as_numpy = None
        for table in self._table_names:
            priority_fn = self._priority_fns.get(table)
            priority = 1.0
            if priority_fn is not None:
                if as_numpy is None:
                    as_numpy = jax.tree_util.tree_map(lambda column: column.numpy(), trajectory)
                priority = float(priority_fn(as_numpy))
            self._writer.create_item(table=table, priority=priority, trajectory=trajectory)
        if self._max_in_flight_items is not None:
            self._flush(self._max_in_flight_items)

    def _begin(self, timestep: dm_env.TimeStep) -> None:
        raise NotImplementedError

    def _step(self, action, next_timestep: dm_env.TimeStep, extras) -> None:
        raise NotImplementedError

    def _clear(self) -> None:
        raise NotImplementedError


class StepAdder(ReverbAdder):
    """Writes one `Step` per action plus the final-observation step; subclasses decide which items to create.

    The writer's row t holds Step(o_t, a_t, r_t, d_t, start_of_episode_t, extras_t), appended whole when the
    action arrives with the reward and discount of the timestep that followed (o_t waits here until then: one
    `append` per step, the writer's dominant cost). The last row of an episode holds the last observation,
    start_of_episode False and zeros elsewhere.
    Subclasses implement `_step_completed()` (called after every complete row, the final one included) and
    `_episode_ended()`.
    """

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self._zero_step = None  # set at the episode end: a row of zeros shaped like the episode's rows
        self._observation = None  # o_t and start_of_episode_t of the row the next action completes
        self._start_of_episode = None

    def _begin(self, timestep):
        self._observation, self._start_of_episode = timestep.observation, np.asarray(True)

    def _step(self, action, next_timestep, extras):
        completion = {
            "action": action,
            "reward": as_float32(next_timestep.reward),
            "discount": as_float32(next_timestep.discount),
            "extras": extras,
        }
        self._writer.append(
            {"observation": self._observation, "start_of_episode": self._start_of_episode, **completion}
        )
        self._step_completed()
        if next_timestep.last():
            zeros = jax.tree_util.tree_map(np.zeros_like, completion)
            self._zero_step = {
                **zeros,
                "observation": jax.tree_util.tree_map(np.zeros_like, next_timestep.observation),
                "start_of_episode": np.asarray(False),
            }
            final = {**zeros, "observation": next_timestep.observation, "start_of_episode": np.asarray(False)}
            self._writer.append(final)
            self._observation = self._start_of_episode = None
            self._step_completed()
            self._episode_ended()
        else:
            self._observation, self._start_of_episode = next_timestep.observation, np.asarray(False)

    def _append_zero_steps(self, count: int) -> None:
        for _ in range(count):
            self._writer.append(self._zero_step)

    def _last_steps(self, length: int) -> Step:
        """The last `length` complete rows of the writer's history as a Step of TrajectoryColumns."""
        history = self._writer.history
        return Step(
            **{
                field: jax.tree_util.tree_map(lambda column: column[-length:], history.get(field, ()))
                for field in Step._fields
            }
        )

    def _step_completed(self) -> None:
        raise NotImplementedError

    def _episode_ended(self) -> None:
        raise NotImplementedError
