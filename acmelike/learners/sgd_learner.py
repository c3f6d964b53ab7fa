"""SGDLearner: the stateful shell every agent's learner is (TrainingState + jitted pure update)."""

import collections
import time
from typing import Any, Callable, Iterator, Mapping, Optional, Protocol, Sequence, runtime_checkable

import jax
import jax.numpy as jnp
import numpy as np

from acmelike import core
from acmelike.learners.steps import scan_update_steps


class NonFiniteLossError(FloatingPointError):
    """A learner's loss became NaN or infinite; the update that produced it was not applied."""


def guard_non_finite(update: Callable, loss_keys: Sequence[str]) -> Callable:
    """Wraps `update(state, batch) -> (state, metrics, extras)` so a call in which any of the `loss_keys`
    metrics is not finite keeps `state`.

    The choice happens on the device, inside the same jitted call, so NaN never reaches the parameters and the
    host need not wait for the result before dispatching the next update. Learners with several losses (an
    actor, critics, a temperature) list them all: one NaN anywhere would soon spread to every network.
    """

    def guarded(state, batch):
        new_state, metrics, extras = update(state, batch)
        finite = jnp.all(jnp.stack([jnp.all(jnp.isfinite(metrics[key])) for key in loss_keys]))
        kept = jax.tree_util.tree_map(lambda new, old: jnp.where(finite, new, old), new_state, state)
        return kept, metrics, extras

    return guarded


@runtime_checkable
class StepCountingState(Protocol):
    """A training state that counts its SGD steps in `steps`, as every agent's `TrainingState` does
    (`update_step` returns it with `steps + 1`)."""

    steps: Any


class SGDLearner(core.Learner, core.Saveable):
    """Pulls a batch, applies a jitted pure update, serves parameters by name.

        learner = SGDLearner(state=init_state, update_step=update_step, iterator=dataset,
                             variables={"policy": lambda s: s.params})
        learner.step()                         # one batch, `num_sgd_steps_per_step` SGD steps
        learner.get_variables(["policy"])

    One call is kept in flight: `step()` dispatches its update, then finishes the previous call on the host
    (NaN check, `after_update`, counts, logs) while the device computes. A non-finite loss is therefore reported
    by the `step()` after the one that produced it (or by `save()`); the update that produced it is never
    applied (see `guard_non_finite`).

    Args:
      state: the initial training state (a pytree, e.g. a `TrainingState` NamedTuple).
      update_step: pure `(state, batch) -> (state, metrics, extras)`; metrics are scalars, extras are per-item
        arrays such as TD errors for priorities.
      iterator: yields batches (`ReplaySample`s).
      variables: name -> function of the state giving what `get_variables(name)` serves.
      num_sgd_steps_per_step: split each batch into this many SGD steps, fused by `lax.scan`.
      after_update: called with (batch, extras as numpy) on the host after each call (e.g. to update priorities).
      loss_keys: the metrics that must stay finite (every loss of the update).
      counter, logger: receive `steps`/`sgd_steps` counts and metrics (metrics at most every `log_period_s`).
      name: names the learner in errors and logs.
    """

    def __init__(
        self,
        *,
        state: Any,
        update_step: Callable,
        iterator: Iterator,
        variables: Mapping[str, Callable[[Any], Any]],
        num_sgd_steps_per_step: int = 1,
        after_update: Optional[Callable[[Any, Mapping[str, np.ndarray]], None]] = None,
        loss_keys: Sequence[str] = ("loss",),
        counter: Any = None,
        logger: Any = None,
        log_period_s: float = 1.0,
        name: str = "learner",
    ):
        self._state = state
        self._iterator = iterator
        self._variables = dict(variables)
        self._after_update = after_update
        if isinstance(loss_keys, str) or not loss_keys:
            raise ValueError(f"{name}: loss_keys must be a non-empty sequence of metric names, got {loss_keys!r}.")
        self._loss_keys = tuple(loss_keys)
        self._counter = counter
        self._logger = logger
        self._log_period_s = log_period_s
        self._last_log = -float("inf")
        self._name = name
        self._num_sgd_steps = num_sgd_steps_per_step
        self._update = jax.jit(
            guard_non_finite(scan_update_steps(update_step, num_sgd_steps_per_step), self._loss_keys))
        self._in_flight = collections.deque()  # (batch, metrics, extras) of calls not yet finished on the host
        self._sgd_steps = 0  # SGD steps finished on the host

    @property
    def state(self) -> Any:
        return self._state

    def log_every_step(self) -> None:
        """Writes the metrics after every step rather than at most every `log_period_s`: which rows the log holds
        then does not depend on timing, so two runs that train identically also log identically (the
        single-process runner's reproducible mode)."""
        self._log_period_s = 0.0

    def step(self) -> None:
        batch = next(self._iterator)
        self._state, metrics, extras = self._update(self._state, batch)
        self._in_flight.append((batch, metrics, extras))
        if len(self._in_flight) > 1:
            self._finish(*self._in_flight.popleft())

    def _finish(self, batch, metrics, extras) -> None:
        for key in self._loss_keys:
            losses = np.asarray(metrics[key]).reshape(-1)  # waits for that call only
            bad = np.flatnonzero(~np.isfinite(losses))
            if bad.size:
                self._in_flight.clear()
                self._raise_non_finite(key, losses, bad[0], metrics)
        self._sgd_steps += self._num_sgd_steps
        if self._after_update is not None:
            self._after_update(batch, jax.device_get(extras))
        counts = self._counter.increment(steps=1, sgd_steps=self._num_sgd_steps) if self._counter else {}
        now = time.time()
        if self._logger is not None and now - self._last_log >= self._log_period_s:
            self._last_log = now
            summary = {key: float(np.mean(value)) for key, value in jax.device_get(metrics).items()}
            self._logger.write({**counts, **summary})

    def _raise_non_finite(self, key: str, losses: np.ndarray, index: int, metrics) -> None:
        step = self._sgd_steps + int(index) + 1
        values = jax.device_get(metrics)
        raise NonFiniteLossError(
            f"{self._name}: loss '{key}' is {losses[index]} at SGD step {step}; that update was not "
            f"applied, so the parameters stay finite. Check the data for NaN/inf (observations, rewards) or lower "
            f"the learning rate. Metrics of that step: "
            + ", ".join(f"{k}={np.asarray(v).reshape(-1)[index]:.4g}" for k, v in values.items())
        )

    def wait(self) -> None:
        """Finishes every call in flight (raising for a non-finite loss among them)."""
        while self._in_flight:
            self._finish(*self._in_flight.popleft())

    def get_variables(self, names):
        unknown = [n for n in names if n not in self._variables]
        if unknown:
            raise KeyError(f"{self._name} serves variables {sorted(self._variables)}; unknown: {unknown}.")
        return [self._variables[name](self._state) for name in names]

    def state_steps(self) -> Optional[int]:
        """Its state's `steps` where the state declares them (a `StepCountingState`); else None."""
        return int(self._state.steps) if isinstance(self._state, StepCountingState) else None

    def save(self) -> Any:
        self.wait()
        return jax.device_get(self._state)

    def restore(self, state: Any) -> None:
        self._in_flight.clear()
        self._state = jax.device_put(state)
