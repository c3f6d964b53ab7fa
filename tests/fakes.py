"""Fakes for fast unit tests: an environment with known episodes and an actor that records its calls."""

from typing import Callable, Optional

import dm_env
import numpy as np
from dm_env import specs


class FakeEnvironment(dm_env.Environment):
    """Episodes of exactly `episode_length` steps with known observations and rewards.

    Observation after step t of an episode (t = 0 at reset): `np.full(observation_shape, t, float32)`.
    Reward of step t (t = 1..episode_length): `float(t)`, so an episode returns L * (L + 1) / 2;
    with `nested_rewards` it is `{"a": t, "b": [2t, 3t]}` (arrays) instead.
    The last step terminates (discount 0.0) unless `truncate` is True (discount 1.0); other steps have
    discount 1.0. Every action passed to `step` is kept in `actions`; `num_resets` counts resets.
    """

    def __init__(
        self,
        episode_length: int = 5,
        num_actions: int = 3,
        observation_shape: tuple = (2,),
        nested_rewards: bool = False,
        truncate: bool = False,
    ):
        self.episode_length = episode_length
        self.num_actions = num_actions
        self.observation_shape = observation_shape
        self.nested_rewards = nested_rewards
        self.truncate = truncate
        self.actions: list = []
        self.num_resets = 0
        self._t = 0
        self._reset_next_step = True

    def _observation(self) -> np.ndarray:
        return np.full(self.observation_shape, self._t, dtype=np.float32)

    def _reward(self):
        if self.nested_rewards:
            return {"a": np.float32(self._t), "b": np.array([2 * self._t, 3 * self._t], np.float32)}
        return float(self._t)

    def reset(self) -> dm_env.TimeStep:
        self.num_resets += 1
        self._t = 0
        self._reset_next_step = False
        return dm_env.restart(self._observation())

    def step(self, action) -> dm_env.TimeStep:
        if self._reset_next_step:
            return self.reset()
        self.actions.append(action)
        self._t += 1
        if self._t < self.episode_length:
            return dm_env.transition(self._reward(), self._observation())
        self._reset_next_step = True
        if self.truncate:
            return dm_env.truncation(self._reward(), self._observation())
        return dm_env.termination(self._reward(), self._observation())

    def observation_spec(self):
        return specs.Array(self.observation_shape, np.float32, name="observation")

    def action_spec(self):
        return specs.DiscreteArray(self.num_actions, dtype=np.int32, name="action")

    def reward_spec(self):
        if self.nested_rewards:
            return {"a": specs.Array((), np.float32), "b": specs.Array((2,), np.float32)}
        return specs.Array((), np.float64, name="reward")

    def discount_spec(self):
        return specs.BoundedArray((), np.float64, 0.0, 1.0, name="discount")


class FakeActor:
    """An `acmelike.core.Actor` that records every call as (name, argument) in `calls`.

    `policy(observation) -> action` chooses actions; by default always `np.int32(0)`.
    """

    def __init__(self, policy: Optional[Callable] = None):
        self.policy = policy or (lambda observation: np.int32(0))
        self.calls: list = []

    @property
    def call_names(self) -> list:
        return [name for name, _ in self.calls]

    def select_action(self, observation):
        self.calls.append(("select_action", observation))
        return self.policy(observation)

    def observe_first(self, timestep: dm_env.TimeStep) -> None:
        self.calls.append(("observe_first", timestep))

    def observe(self, action, next_timestep: dm_env.TimeStep) -> None:
        self.calls.append(("observe", (action, next_timestep)))

    def update(self, wait: bool = False) -> None:
        self.calls.append(("update", wait))
