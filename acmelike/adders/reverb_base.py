"""What the Reverb adders share: the episode guard, step validation, priorities, prompt flushing, `Step` writing.

Importing this module imports neither Reverb nor TensorFlow: the `TrajectoryWriter` and the table signatures
come from the client the caller passes in, a timed-out wait on the server is recognised without importing Reverb
(`timed_out`), and signatures are nests of `acmelike.replay.tables.ArraySpec`: a run on the local replay imports no
TensorFlow (docs/stacks.md; tests/layers/test_adders.py checks these modules import neither).
"""

import sys
import threading
from typing import Callable, Dict, Mapping, Optional, Sequence, Union

import dm_env

import jax
import numpy as np

from acmelike.adders.base import Adder
from acmelike.adders.validation import FieldSpec, InvalidStepError, RealFieldSpec
from acmelike.replay.remote import ReplayTimeout
from acmelike.replay.tables import ArraySpec
from acmelike.types import NestedArray, NestedSpec, Step

PriorityFn = Callable[[NestedArray], float]
PriorityFns = Optional[Mapping[str, Optional[PriorityFn]]]


def step_signature(environment_spec, extras_spec: NestedSpec = (), sequence_length: Optional[int] = None) -> Step:
    """The `ArraySpec` tree of one `Step` item with a leading time axis of `sequence_length` (None: variable)."""

    def timed(spec):
        return ArraySpec.of(spec, time_dim=sequence_length)

    def timed_float32(spec):
        return ArraySpec.of(spec, dtype=np.float32, time_dim=sequence_length)

    return Step(
        observation=jax.tree_util.tree_map(timed, environment_spec.observations),
        action=jax.tree_util.tree_map(timed, environment_spec.actions),
        reward=jax.tree_util.tree_map(timed_float32, environment_spec.rewards),
        discount=jax.tree_util.tree_map(timed_float32, environment_spec.discounts),
        start_of_episode=ArraySpec((sequence_length,), np.bool_),
        extras=jax.tree_util.tree_map(timed, extras_spec),
    )


def timed_out(error: BaseException) -> bool:
    """Whether `error` is a wait slice that ran out: Reverb's DeadlineExceededError (told without importing Reverb:
    only a Reverb client raises one, and then `reverb.errors` is loaded) or a replay node's `ReplayTimeout`
    (`acmelike.replay.remote`). The local replay never waits."""
    if isinstance(error, ReplayTimeout):
        return True
    errors = sys.modules.get("reverb.errors")
    return errors is not None and isinstance(error, errors.DeadlineExceededError)


class AdderInterrupted(RuntimeError):
    """`ReverbAdder.interrupt()` was called while the adder waited for the replay server."""


# Blocking calls to the server wait in slices this long, checking for `interrupt()` in between.
_WAIT_SLICE_MS = 200
_SERVER_INFO_WAIT_S = 1  # server_info takes whole seconds
# How long `close()` waits for the writer once the adder is interrupted (a Launchpad node has 10 s to stop).
CLOSE_WAIT_AFTER_INTERRUPT_S = 3.0

LEARNED = "the first step of this adder's first episode (the table has no signature)"


def close_writer(writer, interrupted: threading.Event) -> None:
    """`writer.close()`, which sends what is pending; once `interrupted` is set, waited on for a bounded time.

    Sending waits on the server's rate limiter, and a stopping program's learner no longer samples (an IMPALA
    queue that nobody drains stays full): the close then never returns. Reverb's close takes no timeout, so an
    interrupted adder closes on a daemon thread and gives up on it after `CLOSE_WAIT_AFTER_INTERRUPT_S`; the items
    still pending are lost with the program that is stopping anyway.
    """
    if not interrupted.is_set():
        writer.close()
        return
    closer = threading.Thread(target=writer.close, name="adder-close", daemon=True)
    closer.start()
    closer.join(CLOSE_WAIT_AFTER_INTERRUPT_S)


class StepContext:
    """Where a step is, for error messages; one per adder, updated in place (formatted only on error)."""

    __slots__ = ("adder", "method", "index")

    def __init__(self, adder: str):
        self.adder, self.method, self.index = adder, "add_first", 0

    def __str__(self):
        return f"{self.adder}.{self.method} (step {self.index} of the episode; add_first's timestep is step 0)"


class ReverbAdder(Adder):
    """Base of the Reverb adders: validates calls and steps, computes priorities, creates items, keeps them flowing.

    Every step is checked before anything of it is appended (see `acmelike.adders.validation`): observation,
    action and extras against the table's signature (fetched from the server at the first `add_first`; from the
    first step when the table has none), rewards and discounts for structure, shape and finiteness. A step that
    cannot be written raises `InvalidStepError` naming the field, what was expected and received, and the step
    index; the episode is then ended (the items it already created are flushed to the table and stay) and the
    adder is ready for the next `add_first`.

    Subclasses implement `_row_specs(signature)`, `_begin(observation)`,
    `_step(action, observation, rewards, discounts, extras, last)` and `_clear()`.
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
        self._client = client
        self._table_names = table_names
        self._priority_fns = dict(priority_fns or {})
        self._max_in_flight_items = max_in_flight_items
        self._writer = client.trajectory_writer(num_keep_alive_refs=num_keep_alive_refs)
        self._interrupted = threading.Event()
        self._in_episode = False
        self._specs = None  # field -> FieldSpec, fixed at the first add_first (entries learned when None)
        self._context = StepContext(name)

    # The Adder protocol.

    def add_first(self, timestep: dm_env.TimeStep) -> None:
        if not timestep.first():
            raise ValueError(
                f"{type(self).__name__}.add_first expects a first timestep (StepType.FIRST, from dm_env.restart), "
                f"but received step_type {timestep.step_type!r}."
            )
        if self._in_episode:  # the previous episode was cut short: drop it
            self.reset()
        if self._specs is None:
            self._specs = self._row_specs(self._table_signature())
        context = self._context
        context.method, context.index = "add_first", 0
        observation = self._checked("observation", timestep.observation)
        self._begin(observation)
        self._in_episode = True

    def add(self, action: NestedArray, next_timestep: dm_env.TimeStep, extras: NestedArray = ()) -> None:
        if not self._in_episode:
            raise ValueError(
                f"{type(self).__name__}.add was called before add_first: expected add_first(timestep) at the start "
                f"of every episode (also after a last timestep or a rejected step), but received add() with a "
                f"timestep of step_type {next_timestep.step_type!r}."
            )
        if next_timestep.first():
            raise ValueError(
                f"{type(self).__name__}.add expects a mid-episode or last timestep, but received a first timestep."
            )
        context = self._context
        context.method = "add"
        context.index += 1
        try:
            action = self._checked("action", action)
            observation = self._checked("observation", next_timestep.observation)
            extras = self._checked("extras", extras)
            rewards = self._checked_reals("reward", next_timestep.reward)
            discounts = self._checked_reals("discount", next_timestep.discount)
        except InvalidStepError:
            self.reset()  # flushes the items already created; the adder is ready for the next add_first
            raise
        last = next_timestep.last()
        self._step(action, observation, rewards, discounts, extras, last)
        if last:
            self._in_episode = False

    def interrupt(self) -> None:
        """Makes a wait for the server (an insert held back by a rate limiter) raise `AdderInterrupted`.

        Safe to call from another thread; a program that is stopping calls it so its actors can exit even when
        the learner no longer samples. The adder is unusable afterwards.
        """
        self._interrupted.set()

    def close(self) -> None:
        """Sends what is pending and closes the writer's stream (a Reverb server waits on open streams to stop).

        After `interrupt()` it waits at most `CLOSE_WAIT_AFTER_INTERRUPT_S` (see `close_writer`).
        """
        close_writer(self._writer, self._interrupted)

    def reset(self) -> None:
        """Drops the partial episode; items already created are still sent."""
        self._end_episode(clear_buffers=True)
        self._in_episode = False
        self._clear()

    # Step validation.

    def _checked(self, field: str, value):
        spec = self._specs.get(field)
        if spec is None:
            spec = self._learn(field, FieldSpec.from_value(field, value, LEARNED))
        return spec.check(value, self._context)

    def _checked_reals(self, field: str, value) -> list:
        spec = self._specs.get(field)
        if spec is None:
            spec = self._learn(field, RealFieldSpec.from_value(field, value, LEARNED, any_real=True))
        return spec.leaves_of(value, self._context)

    def _learn(self, field: str, spec: FieldSpec) -> FieldSpec:
        """Keeps a spec learned from a step (`_accept_learned` may reject it first, e.g. against the table)."""
        self._accept_learned(field, spec)
        self._specs[field] = spec
        return spec

    def _table_signature(self):
        """The item signature of the adder's tables (None if they have none), from one server_info call.

        Raises a ValueError if a table is not on the server or the tables' signatures differ (an item is the
        same for every table). A client without `server_info` (a test double) gives None.
        """
        server_info = getattr(self._client, "server_info", None)
        if server_info is None:
            return None
        while True:
            if self._interrupted.is_set():
                raise AdderInterrupted(f"{type(self).__name__} was interrupted while waiting for the replay server.")
            try:
                tables = server_info(timeout=_SERVER_INFO_WAIT_S)
                break
            except Exception as error:  # noqa: BLE001 - only a timed-out wait is retried
                if not timed_out(error):
                    raise
        name = type(self).__name__
        missing = [table for table in self._table_names if table not in tables]
        if missing:
            raise ValueError(
                f"{name}: tables {missing} are not on the replay server, which has {sorted(tables)}. "
                f"Pass table_names that the server was built with."
            )
        signatures = {table: tables[table].signature for table in self._table_names}
        distinct = {repr(signature) for signature in signatures.values() if signature is not None}
        if len(distinct) > 1:
            raise ValueError(
                f"{name} writes the same item to every table, but the tables' signatures differ: {signatures}."
            )
        return next((signature for signature in signatures.values() if signature is not None), None)

    @staticmethod
    def _signature_field(signature, field: str, table_source: str):
        """One field of a table's item signature (a namedtuple decoded by TensorFlow, or a dict)."""
        if isinstance(signature, Mapping):
            if field in signature:
                return signature[field]
        elif hasattr(signature, field):
            return getattr(signature, field)
        raise ValueError(
            f"{table_source} has no field {field!r}: {signature!r}. Build the table with the adder's `signature`."
        )

    def _flush(self, block_until_num_items: int) -> None:
        """`writer.flush`, waiting in slices so that `interrupt()` can end the wait."""
        while True:
            if self._interrupted.is_set():
                raise AdderInterrupted(f"{type(self).__name__} was interrupted while waiting for the replay server.")
            try:
                self._writer.flush(block_until_num_items=block_until_num_items, timeout_ms=_WAIT_SLICE_MS)
                return
            except Exception as error:  # noqa: BLE001 - only a timed-out slice is retried
                if not timed_out(error):
                    raise

    def _end_episode(self, clear_buffers: bool) -> None:
        """`writer.end_episode`, interruptible: everything is flushed first, so the call itself does not wait."""
        self._flush(0)
        self._writer.end_episode(clear_buffers=clear_buffers)

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

    def _table_source(self) -> str:
        return f"the signature of table {self._table_names[0]!r}"

    def _row_specs(self, signature) -> Dict[str, FieldSpec]:
        """The FieldSpecs a row's fields must meet, from the table's item signature (None: learn them all)."""
        raise NotImplementedError

    def _accept_learned(self, field: str, spec: FieldSpec) -> None:
        """Raises InvalidStepError if a spec learned from a step cannot be written (default: anything can)."""

    def _begin(self, observation) -> None:
        raise NotImplementedError

    def _step(self, action, observation, rewards: list, discounts: list, extras, last: bool) -> None:
        raise NotImplementedError

    def _clear(self) -> None:
        raise NotImplementedError


class StepAdder(ReverbAdder):
    """Writes one `Step` per action plus the final-observation step; subclasses decide which items to create.

    The writer's row t holds Step(o_t, a_t, r_t, d_t, start_of_episode_t, extras_t), appended whole when the
    action arrives with the reward and discount of the timestep that followed (o_t waits here until then: one
    `append` per step, the writer's dominant cost). The last row of an episode holds the last observation,
    start_of_episode False and zeros elsewhere. Rewards and discounts are stored in the table's dtype (float32
    from `signature`), with the shapes of the table's reward and discount specs.
    Subclasses implement `_step_completed()` (called after every complete row, the final one included) and
    `_episode_ended()`.
    """

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self._zero_step = None  # set at the episode end: a row of zeros shaped like the episode's rows
        self._observation = None  # o_t and start_of_episode_t of the row the next action completes
        self._start_of_episode = None

    def _row_specs(self, signature):
        if signature is None:
            return {}
        source = self._table_source()
        specs = {}
        for field in ("observation", "action", "extras", "reward", "discount"):
            kind = RealFieldSpec if field in ("reward", "discount") else FieldSpec
            item = kind.from_specs(field, self._signature_field(signature, field, source), source)
            specs[field] = item.strip_time()  # items are [T, ...]: a row is one time step
        return specs

    def _begin(self, observation):
        self._observation, self._start_of_episode = observation, np.asarray(True)

    def _stored(self, field: str, leaves: list):
        """Checked reward or discount leaves as the arrays a row holds, in the field's structure."""
        spec = self._specs[field]
        if spec.is_leaf:
            return np.asarray(leaves[0], spec.leaves[0].dtype)
        arrays = [np.asarray(leaf, leaf_spec.dtype) for leaf, leaf_spec in zip(leaves, spec.leaves)]
        return jax.tree_util.tree_unflatten(spec.structure, arrays)

    def _step(self, action, observation, rewards, discounts, extras, last):
        completion = {
            "action": action,
            "reward": self._stored("reward", rewards),
            "discount": self._stored("discount", discounts),
            "extras": extras,
        }
        self._writer.append(
            {"observation": self._observation, "start_of_episode": self._start_of_episode, **completion}
        )
        self._step_completed()
        if last:
            zeros = jax.tree_util.tree_map(np.zeros_like, completion)
            self._zero_step = {
                **zeros,
                "observation": jax.tree_util.tree_map(np.zeros_like, observation),
                "start_of_episode": np.asarray(False),
            }
            final = {**zeros, "observation": observation, "start_of_episode": np.asarray(False)}
            self._writer.append(final)
            self._observation = self._start_of_episode = None
            self._step_completed()
            self._episode_ended()
        else:
            self._observation, self._start_of_episode = observation, np.asarray(False)

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
