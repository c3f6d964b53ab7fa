"""SGDLearner: the stateful shell every agent's learner is (TrainingState + jitted pure update)."""

import time
from typing import Any, Callable, Iterator, Mapping, Optional

import jax
import numpy as np

from acmelike import core
from acmelike.learners.steps import scan_update_steps


class NonFiniteLossError(FloatingPointError):
    """A learner's loss became NaN or infinite; the update that produced it was not applied."""


class SGDLearner(core.Learner, core.Saveable):
    """Pulls a batch, applies a jitted pure update, serves parameters by name.

        learner = SGDLearner(state=init_state, update_step=update_step, iterator=dataset,
                             variables={"policy": lambda s: s.params})
        learner.step()                         # one batch, `num_sgd_steps_per_step` SGD steps
        learner.get_variables(["policy"])

    Args:
      state: the initial training state (a pytree, e.g. a `TrainingState` NamedTuple).
      update_step: pure `(state, batch) -> (state, metrics, extras)`; metrics are scalars, extras are per-item
        arrays such as TD errors for priorities.
      iterator: yields batches (`ReplaySample`s).
      variables: name -> function of the state giving what `get_variables(name)` serves.
      num_sgd_steps_per_step: split each batch into this many SGD steps, fused by `lax.scan`.
      after_update: called with (batch, extras) on the host after each step (e.g. to update priorities).
      loss_key: the metric checked for NaN/inf after every step.
      counter, logger: receive `learner_steps` counts and metrics (metrics at most every `log_period_s`).
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
        loss_key: str = "loss",
        counter: Any = None,
        logger: Any = None,
        log_period_s: float = 1.0,
        name: str = "learner",
    ):
        self._state = state
        self._iterator = iterator
        self._variables = dict(variables)
        self._after_update = after_update
        self._loss_key = loss_key
        self._counter = counter
        self._logger = logger
        self._log_period_s = log_period_s
        self._last_log = -float("inf")
        self._name = name
        self._num_sgd_steps = num_sgd_steps_per_step
        self._update = jax.jit(scan_update_steps(update_step, num_sgd_steps_per_step))
        self._sgd_steps = 0

    @property
    def state(self) -> Any:
        return self._state

    def step(self) -> None:
        batch = next(self._iterator)
        new_state, metrics, extras = self._update(self._state, batch)
        metrics = jax.device_get(metrics)
        self._check_finite(metrics)
        self._state = new_state  # only a finite update is kept: a NaN loss loses nothing
        self._sgd_steps += self._num_sgd_steps
        if self._after_update is not None:
            self._after_update(batch, jax.device_get(extras))
        counts = self._counter.increment(steps=1, sgd_steps=self._num_sgd_steps) if self._counter else {}
        now = time.time()
        if self._logger is not None and now - self._last_log >= self._log_period_s:
            self._last_log = now
            summary = {key: float(np.mean(value)) for key, value in metrics.items()}
            self._logger.write({**counts, **summary})

    def _check_finite(self, metrics: Mapping[str, np.ndarray]) -> None:
        losses = np.asarray(metrics[self._loss_key]).reshape(-1)
        bad = np.flatnonzero(~np.isfinite(losses))
        if bad.size:
            step = self._sgd_steps + int(bad[0]) + 1
            raise NonFiniteLossError(
                f"{self._name}: loss '{self._loss_key}' is {losses[bad[0]]} at SGD step {step}; the update was not "
                f"applied and the parameters from step {self._sgd_steps} are kept. Check the data for NaN/inf "
                f"(observations, rewards) or lower the learning rate. Other metrics: "
                + ", ".join(f"{k}={np.asarray(v).reshape(-1)[bad[0]]:.4g}" for k, v in metrics.items())
            )

    def get_variables(self, names):
        unknown = [n for n in names if n not in self._variables]
        if unknown:
            raise KeyError(f"{self._name} serves variables {sorted(self._variables)}; unknown: {unknown}.")
        return [self._variables[name](self._state) for name in names]

    def save(self) -> Any:
        return jax.device_get(self._state)

    def restore(self, state: Any) -> None:
        self._state = jax.device_put(state)
