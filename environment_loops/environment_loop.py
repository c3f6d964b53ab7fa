"""EnvironmentLoop: runs dm_env episodes through an Actor (one environment, or B stepped together), counting and
logging each episode."""

import collections
import time
from typing import Any, Mapping, Optional, Protocol, Sequence

import dm_env
import jax
import numpy as np
from dm_env import specs

from acmelike import core
from acmelike.counting import Counter
from acmelike.loggers import Logger, make_default_logger

_FIRST, _MID, _LAST = (np.int8(step_type) for step_type in dm_env.StepType)
_MID_STEP = dm_env.StepType.MID  # one environment's usual step type: `is` tells it without making an array


class Observer(Protocol):
    """Sees every timestep of the loop's episodes and reports metrics at the end of each episode."""

    def observe_first(self, env: dm_env.Environment, timestep: dm_env.TimeStep) -> None:
        ...

    def observe(self, env: dm_env.Environment, timestep: dm_env.TimeStep, action: Any) -> None:
        ...

    def get_metrics(self) -> Mapping[str, Any]:
        ...


def _nested_add(total, reward):
    """Element-wise sum of two nests (dicts, lists, tuples) of numbers/arrays with the same structure."""
    if isinstance(total, dict):
        return type(total)((key, _nested_add(value, reward[key])) for key, value in total.items())
    if isinstance(total, tuple) and hasattr(total, "_fields"):
        return type(total)(*map(_nested_add, total, reward))
    if isinstance(total, (list, tuple)):
        return type(total)(map(_nested_add, total, reward))
    return np.add(total, reward)


def _is_per_agent(reward_spec) -> bool:
    """A dict of scalar rewards is one reward per agent, keyed by agent id (a multi-agent environment,
    `acmelike.wrappers.pettingzoo_adapter`)."""
    return isinstance(reward_spec, dict) and bool(reward_spec) and all(
        isinstance(spec, specs.Array) and spec.shape == () for spec in reward_spec.values()
    )


def _team_and_agent_returns(episode_return: Mapping[str, Any]) -> dict:
    """`episode_return`: the team's return, the sum of the agents' (a float, as for one agent, so summaries
    and return thresholds read it unchanged); `episode_return/<agent id>`: each agent's."""
    returns = {f"episode_return/{agent}": float(value) for agent, value in episode_return.items()}
    return {"episode_return": sum(returns.values()), **returns}


def _batch_of_one(values, batched: bool):
    """`values` with a leading batch axis: a batched environment's as they are, one environment's as a batch of one."""
    return values if batched else jax.tree_util.tree_map(lambda x: np.asarray(x)[None], values)


def _nested_zeros(spec, batch_shape=()):
    """Zeros shaped like `spec` (a nest of `specs.Array`), each leaf with `batch_shape` in front."""
    if isinstance(spec, specs.Array):
        return np.zeros(batch_shape + spec.shape, spec.dtype)
    if isinstance(spec, dict):
        return type(spec)((key, _nested_zeros(value, batch_shape)) for key, value in spec.items())
    if isinstance(spec, tuple) and hasattr(spec, "_fields"):
        return type(spec)(*(_nested_zeros(value, batch_shape) for value in spec))
    if isinstance(spec, (list, tuple)):
        return type(spec)(_nested_zeros(value, batch_shape) for value in spec)
    raise TypeError(f"Cannot build a zero episode return from the reward spec {spec!r}.")


class EnvironmentLoop:
    """Runs episodes of `environment` through `actor`, the loop in `acmelike.core`'s docstring:

        timestep = environment.reset()          # one environment: again after each episode
        actor.observe_first(timestep)
        while ...:
            action = actor.select_action(timestep.observation)
            timestep = environment.step(action)
            actor.observe(action, next_timestep=timestep)
            actor.update()

    The environment is one dm_env environment, or B stepped together (a `VectorEnvironment` or any environment
    with `num_envs`, whose timesteps carry a leading axis [B] and whose sub-environments reset themselves in the
    step after their LAST, as `acmelike.wrappers.vector` describes). The loop counts each sub-environment's return and length, one
    environment being a batch of one; each finished episode gives one result (see `run_episode`), written to the
    logger, so a runner drives one environment and B alike, one episode at a time.

    Args:
      environment: a dm_env environment, or a batched one.
      actor: an `acmelike.core.Actor` taking the environment's values (a `GenericActor` with `num_envs` B for a
        batched environment).
      counter: counts `episodes` and `steps` (incremented once per finished episode); a fresh `Counter()` by
        default. Give it a parent and a prefix (`Counter(root, prefix="actor")`) to get `actor_steps` etc.
      logger: receives each episode's result (written by `run_episode`, so also when a caller runs its own
        loop of `run_episode` calls); by default a TerminalLogger labelled `label` printing
        at most once a second.
      observers: objects with `observe_first(env, timestep)`, `observe(env, timestep, action)` and
        `get_metrics() -> dict`; they see the environment's own timesteps and actions, and their metrics are
        merged into each episode's result.
      label: the default logger's label.
      should_update: whether to call `actor.update()` after every step.
    """

    def __init__(
        self,
        environment: dm_env.Environment,
        actor: core.Actor,
        counter: Optional[Counter] = None,
        logger: Optional[Logger] = None,
        observers: Sequence[Observer] = (),
        label: str = "actor",
        should_update: bool = True,
    ):
        self._environment = environment
        self._actor = actor
        self._counter = counter if counter is not None else Counter()
        self._logger = logger if logger is not None else make_default_logger(label)
        self._observers = tuple(observers)
        self._should_update = should_update
        self._batched = hasattr(environment, "num_envs")
        batch = (environment.num_envs if self._batched else 1,)
        reward_spec = environment.reward_spec()
        # Returns are summed per sub-environment: a scalar reward in float64 (as Python floats would), any other
        # reward spec (an array, or a nest of arrays) in its own dtypes.
        self._scalar_reward = isinstance(reward_spec, specs.Array) and reward_spec.shape == ()
        self._per_agent = _is_per_agent(reward_spec)
        if self._scalar_reward:
            self._new_returns = lambda: np.zeros(batch, np.float64)
        else:
            self._new_returns = lambda: _nested_zeros(reward_spec, batch)
        self._returns = self._new_returns()
        self._starts = np.zeros(batch, np.int64)  # each sub-environment's step count at its episode's start
        self._timestep: Optional[dm_env.TimeStep] = None  # None: the environment must be reset
        self._finished = collections.deque()  # (sub-environment, return, length) of episodes not yet reported
        self._steps = 0  # of the environment (of every sub-environment at once)
        self._steps_per_second = float("inf")

    @property
    def actor(self) -> core.Actor:
        return self._actor

    @property
    def environment(self) -> dm_env.Environment:
        return self._environment

    def _reset(self) -> None:
        self._starts[:] = self._steps
        timestep = self._environment.reset()
        self._actor.observe_first(timestep)
        for observer in self._observers:
            observer.observe_first(self._environment, timestep)
        self._timestep = timestep

    def _step(self) -> None:
        """One step (of every sub-environment); queues the episodes it finishes. A sub-environment's FIRST
        timestep (its reset, the action ignored) is not one of its steps and carries no reward."""
        if self._timestep is None:
            self._reset()
        action = self._actor.select_action(self._timestep.observation)
        timestep = self._environment.step(action)
        self._actor.observe(action, next_timestep=timestep)
        for observer in self._observers:
            observer.observe(self._environment, timestep, action)
        if self._should_update:
            self._actor.update()
        self._steps += 1
        if self._scalar_reward:
            self._returns += timestep.reward
        else:
            self._returns = _nested_add(self._returns, _batch_of_one(timestep.reward, self._batched))
        step_type = timestep.step_type
        if step_type is _MID_STEP or (np.asarray(step_type) == _MID).all():  # no episode starts or ends
            self._timestep = timestep
            return
        step_type = np.reshape(step_type, -1)  # [B]; one environment's is a batch of one
        for i in np.flatnonzero(step_type == _LAST):
            self._finished.append((int(i), self._take_return(i), self._steps - int(self._starts[i])))
        self._starts[step_type == _FIRST] = self._steps  # the reset step: not one of the episode's
        # A batched environment resets its finished sub-environments in its next step; one environment's episode
        # has ended, and the loop resets it before the next step.
        self._timestep = timestep if self._batched else None

    def _take_return(self, i: int):
        """Sub-environment `i`'s return, zeroed for its next episode."""
        if self._scalar_reward:
            episode_return = float(self._returns[i])
            self._returns[i] = 0.0
            return episode_return
        episode_return = jax.tree_util.tree_map(lambda total: total[i].copy(), self._returns)
        jax.tree_util.tree_map(lambda total: total.__setitem__(i, 0), self._returns)
        return episode_return

    def run_episode(self) -> dict:
        """Steps until an episode finishes (or takes one finished earlier), writes its result to the logger and
        returns it.

        The result holds `episode_return` (a float for scalar rewards, else arrays shaped like the reward
        spec; for per-agent rewards the team's, beside each agent's: see `_team_and_agent_returns`),
        `episode_length` (steps taken), `steps_per_second` (environment steps in this call, B per step of a
        batched environment, over its duration, the resets included; one environment: this episode's), for a batched environment `sub_environment` (which one), the
        counter's counts after adding `episodes=1, steps=episode_length`, and every observer's metrics.
        """
        start, steps_before = time.perf_counter(), self._steps
        while not self._finished:
            self._step()
        steps = (self._steps - steps_before) * len(self._starts)
        if steps > 0:
            duration = time.perf_counter() - start
            self._steps_per_second = steps / duration if duration > 0 else float("inf")
        index, episode_return, episode_length = self._finished.popleft()
        result = _team_and_agent_returns(episode_return) if self._per_agent else {"episode_return": episode_return}
        result["episode_length"] = episode_length
        if self._batched:
            result["sub_environment"] = index
        result["steps_per_second"] = self._steps_per_second
        result.update(self._counter.increment(episodes=1, steps=episode_length))
        for observer in self._observers:
            result.update(observer.get_metrics())
        self._logger.write(result)
        return result

    def run(self, num_episodes: Optional[int] = None, num_steps: Optional[int] = None) -> int:
        """Runs episodes until `num_episodes` episodes or `num_steps` steps are done, whichever is first.

        Only whole episodes count: with `num_steps`, the loop stops after the episode during which the step
        count reached `num_steps` (so it may run more steps). With neither limit it runs forever. Returns
        the number of steps of the episodes run; every episode's result goes to the logger (an
        `acmelike.loggers.InMemoryLogger` keeps them all).
        """
        for name, limit in (("num_episodes", num_episodes), ("num_steps", num_steps)):
            if limit is not None and limit < 0:
                raise ValueError(f"{name} must be >= 0 or None, got {limit}.")
        episodes, steps = 0, 0
        while (num_episodes is None or episodes < num_episodes) and (num_steps is None or steps < num_steps):
            result = self.run_episode()
            episodes += 1
            steps += result["episode_length"]
        return steps
