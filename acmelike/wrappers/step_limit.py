"""StepLimitWrapper: ends episodes with a truncation after a fixed number of steps."""

from typing import Optional

import dm_env

from acmelike.wrappers.base import EnvironmentWrapper


class StepLimitWrapper(EnvironmentWrapper):
    """Truncates every episode after `step_limit` steps.

    The step that reaches the limit is returned with `StepType.LAST` and the wrapped environment's discount
    (a truncation: bootstrapping from the last observation stays valid). An episode that ends earlier by itself
    is passed through unchanged. The step after a LAST timestep resets the wrapped environment (dm_env
    auto-reset), even if the wrapped environment itself is mid-episode. `step_limit=None` means no limit.
    """

    def __init__(self, environment: dm_env.Environment, step_limit: Optional[int] = None):
        if step_limit is not None and (not isinstance(step_limit, int) or step_limit < 1):
            raise ValueError(f"step_limit must be a positive int or None, got {step_limit!r}.")
        super().__init__(environment)
        self._step_limit = step_limit
        self._elapsed_steps = 0
        self._reset_next_step = True

    def reset(self) -> dm_env.TimeStep:
        self._elapsed_steps = 0
        self._reset_next_step = False
        return self._environment.reset()

    def step(self, action) -> dm_env.TimeStep:
        if self._reset_next_step:
            return self.reset()
        timestep = self._environment.step(action)
        self._elapsed_steps += 1
        if timestep.last():
            self._reset_next_step = True
        elif self._step_limit is not None and self._elapsed_steps >= self._step_limit:
            self._reset_next_step = True
            timestep = timestep._replace(step_type=dm_env.StepType.LAST)
        return timestep
