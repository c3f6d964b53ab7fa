"""EnvironmentLoop: runs dm_env episodes through an Actor, counting and logging each episode."""

import time
from typing import Any, Mapping, Optional, Protocol, Sequence

import dm_env
import numpy as np
from dm_env import specs

from acmelike import core
from acmelike.counting import Counter
from acmelike.loggers import Logger, make_default_logger

_LAST = dm_env.StepType.LAST


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


def _add_scalar(total: float, reward) -> float:
    # In Python floats: float64 accumulation under NumPy 1 and 2, and cheaper than NumPy scalar arithmetic.
    return total + float(reward)


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


def _nested_zeros(spec):
    if isinstance(spec, specs.Array):
        return np.zeros(spec.shape, spec.dtype)
    if isinstance(spec, dict):
        return type(spec)((key, _nested_zeros(value)) for key, value in spec.items())
    if isinstance(spec, tuple) and hasattr(spec, "_fields"):
        return type(spec)(*map(_nested_zeros, spec))
    if isinstance(spec, (list, tuple)):
        return type(spec)(map(_nested_zeros, spec))
    raise TypeError(f"Cannot build a zero episode return from the reward spec {spec!r}.")


class EnvironmentLoop:
    """Runs episodes of `environment` through `actor`, the loop in `acmelike.core`'s docstring.

    Args:
      environment: a dm_env environment.
      actor: an `acmelike.core.Actor`.
      counter: counts `episodes` and `steps` (incremented once per episode); a fresh `Counter()` by default.
        Give it a parent and a prefix (`Counter(root, prefix="actor")`) to get `actor_steps` etc.
      logger: receives each episode's result (written by `run_episode`, so also when a caller runs its own
        loop of `run_episode` calls); by default a TerminalLogger labelled `label` printing
        at most once a second.
      observers: objects with `observe_first(env, timestep)`, `observe(env, timestep, action)` and
        `get_metrics() -> dict`; their metrics are merged into each episode's result.
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
        reward_spec = environment.reward_spec()
        # A scalar reward is summed in a Python float; any other reward spec
        # (an array, or a nest of arrays) is summed with NumPy, starting from zeros of the spec.
        self._scalar_reward = isinstance(reward_spec, specs.Array) and reward_spec.shape == ()
        self._reward_spec = reward_spec
        self._per_agent = _is_per_agent(reward_spec)

    @property
    def actor(self) -> core.Actor:
        return self._actor

    @property
    def environment(self) -> dm_env.Environment:
        return self._environment

    def run_episode(self) -> dict:
        """Runs one episode, writes its result to the logger and returns it.

        The result holds `episode_return` (a float for scalar rewards, else arrays shaped like the reward
        spec; for per-agent rewards the team's, beside each agent's: see `_team_and_agent_returns`),
        `episode_length` (steps taken), `steps_per_second` (including the reset), the counter's counts
        after adding `episodes=1, steps=episode_length`, and every observer's metrics.
        """
        environment, actor, observers = self._environment, self._actor, self._observers
        select_action, step, observe = actor.select_action, environment.step, actor.observe
        update = actor.update if self._should_update else None

        start = time.perf_counter()
        timestep = environment.reset()
        actor.observe_first(timestep)
        for observer in observers:
            observer.observe_first(environment, timestep)

        # The hot loops: no per-step clock reads, tree maps or attribute lookups beyond the calls themselves
        # (`step_type == LAST` is `timestep.last()` without its method call and Enum attribute lookup).
        last = _LAST
        episode_steps = 0
        if self._scalar_reward and not observers:
            # In a Python float: float64 accumulation under NumPy 1 and 2, cheaper than NumPy scalar arithmetic.
            episode_return = 0.0
            while timestep.step_type != last:
                action = select_action(timestep.observation)
                timestep = step(action)
                observe(action, next_timestep=timestep)
                if update is not None:
                    update()
                episode_steps += 1
                episode_return += float(timestep.reward)
        else:
            if self._scalar_reward:
                episode_return, add = 0.0, _add_scalar
            else:
                episode_return, add = _nested_zeros(self._reward_spec), _nested_add
            while timestep.step_type != last:
                action = select_action(timestep.observation)
                timestep = step(action)
                observe(action, next_timestep=timestep)
                for observer in observers:
                    observer.observe(environment, timestep, action)
                if update is not None:
                    update()
                episode_steps += 1
                episode_return = add(episode_return, timestep.reward)
        duration = time.perf_counter() - start

        result = _team_and_agent_returns(episode_return) if self._per_agent else {"episode_return": episode_return}
        result["episode_length"] = episode_steps
        result["steps_per_second"] = episode_steps / duration if duration > 0 else float("inf")
        result.update(self._counter.increment(episodes=1, steps=episode_steps))
        for observer in observers:
            result.update(observer.get_metrics())
        self._logger.write(result)
        return result

    def run(self, num_episodes: Optional[int] = None, num_steps: Optional[int] = None) -> int:
        """Runs episodes until `num_episodes` episodes or `num_steps` steps are done, whichever is first.

        Only whole episodes run: with `num_steps`, the loop stops after the episode during which the step
        count reached `num_steps` (so it may run more steps). With neither limit it runs forever. Returns
        the number of steps run; every episode's result goes to the logger (an `acmelike.loggers.InMemoryLogger`
        keeps them all).
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
