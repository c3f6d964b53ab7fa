"""BatchedEnvironmentLoop: steps a vector environment through a batched actor, one result per finished episode."""

import collections
import time
from typing import Optional

import dm_env
import numpy as np

from acmelike import core
from acmelike.counting import Counter
from acmelike.loggers import Logger, make_default_logger

_FIRST, _LAST = np.int8(dm_env.StepType.FIRST), np.int8(dm_env.StepType.LAST)


class BatchedEnvironmentLoop:
    """`EnvironmentLoop`'s interface over B sub-environments stepped together.

    The loop (`acmelike.core`'s, batched: see `acmelike.actors.BatchedActor`):

        timestep = environment.reset()                       # once; sub-environments then reset themselves
        actor.observe_first(timestep)
        while ...:
            actions = actor.select_action(timestep.observation)
            timestep = environment.step(actions)
            actor.observe(actions, next_timestep=timestep)
            actor.update()

    Episode returns and lengths are counted per sub-environment. Each finished episode gives one result, as an
    `EnvironmentLoop` episode does (`episode_return`, `episode_length`, `sub_environment`, `steps_per_second` of the
    whole loop, and the counter's counts after adding `episodes=1, steps=episode_length`), written to the logger.
    `run_episode()` returns the next finished episode's result, stepping the environment until one finishes, so
    a runner written for `EnvironmentLoop` drives this loop unchanged. Steps count actions taken: the vector step
    in which a sub-environment resets is not one of its steps.

    Args:
      environment: a `VectorEnvironment` (batched timesteps, `num_envs`).
      actor: a `BatchedActor` (or any core.Actor taking batched values).
      counter, logger, label, should_update: as for `EnvironmentLoop`.
    """

    def __init__(
        self,
        environment: dm_env.Environment,
        actor: core.Actor,
        counter: Optional[Counter] = None,
        logger: Optional[Logger] = None,
        label: str = "actor",
        should_update: bool = True,
    ):
        self._environment = environment
        self._actor = actor
        self._counter = counter if counter is not None else Counter()
        self._logger = logger if logger is not None else make_default_logger(label)
        self._should_update = should_update
        num_envs = environment.num_envs
        self._returns = np.zeros(num_envs, np.float64)
        self._lengths = np.zeros(num_envs, np.int64)
        self._timestep = None
        self._finished = collections.deque()
        self._steps_taken = 0
        self._start = None

    @property
    def actor(self) -> core.Actor:
        return self._actor

    @property
    def environment(self) -> dm_env.Environment:
        return self._environment

    def _step(self) -> None:
        """One vector step; queues the results of the episodes it finishes."""
        if self._timestep is None:
            self._start = time.perf_counter()
            self._timestep = self._environment.reset()
            self._actor.observe_first(self._timestep)
        actions = self._actor.select_action(self._timestep.observation)
        timestep = self._environment.step(actions)
        self._actor.observe(actions, next_timestep=timestep)
        if self._should_update:
            self._actor.update()
        self._timestep = timestep
        acting = timestep.step_type != _FIRST
        self._returns += np.where(acting, timestep.reward, 0.0)
        self._lengths += acting
        self._steps_taken += int(acting.sum())
        for i in np.flatnonzero(timestep.step_type == _LAST):
            self._finished.append((int(i), float(self._returns[i]), int(self._lengths[i])))
            self._returns[i], self._lengths[i] = 0.0, 0

    def run_episode(self) -> dict:
        """Steps until an episode finishes (or takes one finished earlier), logs its result and returns it."""
        while not self._finished:
            self._step()
        index, episode_return, episode_length = self._finished.popleft()
        duration = time.perf_counter() - self._start
        result = {
            "episode_return": episode_return,
            "episode_length": episode_length,
            "sub_environment": index,
            "steps_per_second": self._steps_taken / duration if duration > 0 else float("inf"),
        }
        result.update(self._counter.increment(episodes=1, steps=episode_length))
        self._logger.write(result)
        return result

    def run(self, num_episodes: Optional[int] = None, num_steps: Optional[int] = None) -> int:
        """Runs until `num_episodes` episodes or `num_steps` steps (of finished episodes) are done; returns the steps.

        As for `EnvironmentLoop`, only finished episodes count; with neither limit it runs forever.
        """
        for name, limit in (("num_episodes", num_episodes), ("num_steps", num_steps)):
            if limit is not None and limit < 0:
                raise ValueError(f"{name} must be >= 0 or None, got {limit}.")
        episodes, steps = 0, 0
        while (num_episodes is None or episodes < num_episodes) and (num_steps is None or steps < num_steps):
            steps += self.run_episode()["episode_length"]
            episodes += 1
        return steps


def make_environment_loop(environment: dm_env.Environment, actor: core.Actor, **kwargs):
    """A `BatchedEnvironmentLoop` for a batched environment (one with `num_envs`), else an `EnvironmentLoop`;
    `kwargs` (counter, logger, label, should_update) go to either."""
    if hasattr(environment, "num_envs"):
        return BatchedEnvironmentLoop(environment, actor, **kwargs)
    from environment_loops.environment_loop import EnvironmentLoop

    return EnvironmentLoop(environment, actor, **kwargs)
