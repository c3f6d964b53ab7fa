"""The shared test fakes: environments with known episodes (discrete and continuous actions), an actor and an adder
that record their calls, and a variable source that counts its fetches. Every test file takes its fakes from here."""

import functools
from typing import Any, Callable, Optional

import dm_env
import numpy as np
from dm_env import specs

from acmelike import core
from acmelike.adders.base import Adder
from acmelike.specs import EnvironmentSpec
from acmelike.types import ReplaySample, SampleInfo, Transition


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
        observation_dtype=np.float32,
        action_dtype=np.int32,
    ):
        self.observation_dtype = np.dtype(observation_dtype)
        self.action_dtype = np.dtype(action_dtype)
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
        return np.full(self.observation_shape, self._t, dtype=self.observation_dtype)

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
        self._check_action(action)
        self._t += 1
        if self._t < self.episode_length:
            return dm_env.transition(self._reward(), self._observation())
        self._reset_next_step = True
        if self.truncate:
            return dm_env.truncation(self._reward(), self._observation())
        return dm_env.termination(self._reward(), self._observation())

    def _check_action(self, action) -> None:
        # Like a strict native environment (bsuite's catch wants int64), NumPy actions must match the action spec's
        # dtype, shape and bounds; plain Python numbers are let through for hand-written tests.
        if isinstance(action, (np.ndarray, np.generic)):
            self.action_spec().validate(action)

    def observation_spec(self):
        return specs.Array(self.observation_shape, self.observation_dtype, name="observation")

    def action_spec(self):
        return specs.DiscreteArray(self.num_actions, dtype=self.action_dtype, name="action")

    def reward_spec(self):
        if self.nested_rewards:
            return {"a": specs.Array((), np.float32), "b": specs.Array((2,), np.float32)}
        return specs.Array((), np.float64, name="reward")

    def discount_spec(self):
        return specs.BoundedArray((), np.float64, 0.0, 1.0, name="discount")


class FakeContinuousEnvironment(FakeEnvironment):
    """`FakeEnvironment` with a bounded Box action of shape `action_shape` in [-1, 1] (float32).

    Actions outside the bounds raise, as gymnasium's adapter would reject them.
    """

    def __init__(self, action_shape: tuple = (1,), **kwargs):
        super().__init__(**kwargs)
        self.action_shape = action_shape

    def action_spec(self):
        return specs.BoundedArray(self.action_shape, np.float32, -1.0, 1.0, name="action")


class FakeNestedEnvironment(FakeContinuousEnvironment):
    """`FakeContinuousEnvironment` observing a dict, as a Control Suite task does, with a nested dict, a scalar, a
    bool array and float64 leaves, each with its own values after step t:

        {"velocity": [4, 5] + 10t, "position": [1, 2, 3] + 10t,                      float64
         "sensors": {"touch": [True, False] (bool), "height": 6 + 10t (float64 scalar)}}

    `frames=True` adds "pixels": uint8 frames [4, 4, 3] (an image beside the vectors).
    """

    def __init__(self, frames: bool = False, **kwargs):
        super().__init__(**kwargs)
        self.frames = frames

    def _observation(self):
        t = 10.0 * self._t
        observation = {"velocity": np.array([4.0, 5.0]) + t, "position": np.array([1.0, 2.0, 3.0]) + t,
                       "sensors": {"touch": np.array([True, False]), "height": np.float64(6.0 + t)}}
        if self.frames:
            observation["pixels"] = np.full((4, 4, 3), self._t, np.uint8)
        return observation

    def observation_spec(self):
        spec = {"velocity": specs.Array((2,), np.float64, name="velocity"),
                "position": specs.Array((3,), np.float64, name="position"),
                "sensors": {"touch": specs.Array((2,), np.bool_, name="touch"),
                            "height": specs.Array((), np.float64, name="height")}}
        if self.frames:
            spec["pixels"] = specs.Array((4, 4, 3), np.uint8, name="pixels")
        return spec


def smoke_overrides(agent: str) -> list:
    """The registry's smoke config of `agent` as `--config` texts ("key=value"; tuples comma-separated): small
    enough that the learner steps within a few hundred environment steps."""
    from launch.registry import agent_definition

    return [f"{key}={','.join(map(str, value)) if isinstance(value, tuple) else value}"
            for key, value in agent_definition(agent).smoke_config.items()]


def fake_environment(action_space: str, seed: int, episode_length: int = 10) -> dm_env.Environment:
    """A fake environment for `action_space` ("discrete" or "continuous"); `seed` is accepted and unused (the
    fakes are deterministic), so this serves as an `ExperimentConfig.environment_factory`."""
    del seed
    if action_space == "discrete":
        return FakeEnvironment(episode_length=episode_length, observation_shape=(4,))
    if action_space == "continuous":
        return FakeContinuousEnvironment(episode_length=episode_length, observation_shape=(4,))
    raise ValueError(f"No fake environment for action space {action_space!r}.")


def fake_environment_factory(action_space: str) -> Callable[[int], dm_env.Environment]:
    """A picklable seed -> environment factory for `fake_environment(action_space, seed)`."""
    return functools.partial(fake_environment, action_space)


class FakeActor(core.Actor):
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


class RecordingAdder(Adder):
    """An `Adder` that records every call: ("first", timestep), ("add", action, next_timestep, extras), ("reset",),
    ("close",), ("interrupt",)."""

    def __init__(self):
        self.calls: list = []

    def add_first(self, timestep: dm_env.TimeStep) -> None:
        self.calls.append(("first", timestep))

    def add(self, action, next_timestep: dm_env.TimeStep, extras=()) -> None:
        self.calls.append(("add", action, next_timestep, extras))

    def reset(self) -> None:
        self.calls.append(("reset",))

    def close(self) -> None:
        self.calls.append(("close",))

    def interrupt(self) -> None:
        self.calls.append(("interrupt",))


class FakeVariableSource(core.VariableSource):
    """Serves `value` (by default the fetch count as a float32 scalar) under every name; counts fetches in `calls`."""

    def __init__(self, value: Any = None):
        self.value = value
        self.calls = 0

    def get_variables(self, names):
        self.calls += 1
        value = self.value if self.value is not None else np.full((), self.calls, np.float32)
        return [value for _ in names]


def random_transition_batches(spec, batch_size: int, seed: int):
    """Endless batches of random transitions on `spec`'s spaces: a stand-in for a recorded dataset."""
    rng = np.random.default_rng(seed)
    info = SampleInfo(np.zeros(batch_size, np.uint64), np.full(batch_size, 1.0), np.full(batch_size, batch_size))
    shape = (batch_size, *spec.observations.shape)
    while True:
        if isinstance(spec.actions, specs.DiscreteArray):
            actions = rng.integers(0, spec.actions.num_values, batch_size).astype(spec.actions.dtype)
        else:
            actions = rng.uniform(spec.actions.minimum, spec.actions.maximum,
                                  (batch_size, *spec.actions.shape)).astype(spec.actions.dtype)
        yield ReplaySample(info=info, data=Transition(
            observation=rng.normal(size=shape).astype(np.float32), action=actions,
            reward=rng.normal(size=batch_size).astype(np.float32), discount=np.full(batch_size, 0.99, np.float32),
            next_observation=rng.normal(size=shape).astype(np.float32), extras=()))


PENDULUM_ACTIONS = specs.BoundedArray((1,), np.float32, -2.0, 2.0, name="action")


def continuous_spec(actions=PENDULUM_ACTIONS, observation_size: int = 3) -> EnvironmentSpec:
    """A float-vector observation, `actions`, scalar float32 rewards and discounts in [0, 1]."""
    return EnvironmentSpec(
        observations=specs.Array((observation_size,), np.float32, "observation"),
        actions=actions,
        rewards=specs.Array((), np.float32, "reward"),
        discounts=specs.BoundedArray((), np.float32, 0.0, 1.0, "discount"),
    )


def discrete_spec(observations, num_actions: int = 3) -> EnvironmentSpec:
    """`observations` (any dm_env spec: a vector, an image), `num_actions` discrete int32 actions, scalar float32
    rewards and discounts in [0, 1]."""
    return EnvironmentSpec(
        observations=observations,
        actions=specs.DiscreteArray(num_actions, dtype=np.int32),
        rewards=specs.Array((), np.float32),
        discounts=specs.BoundedArray((), np.float32, 0.0, 1.0),
    )


def transition_batch(spec, n: int, seed: int = 0, reward: Optional[float] = None) -> ReplaySample:
    """`n` random transitions on `spec`'s continuous spaces, actions uniform in the bounds; every reward is
    `reward` if given (e.g. NaN, for the learners' guard)."""
    rng = np.random.default_rng(seed)
    obs, low, high = spec.observations.shape, spec.actions.minimum, spec.actions.maximum
    return ReplaySample(
        info=SampleInfo(np.arange(n, dtype=np.uint64), np.full(n, 1.0 / n), np.full(n, n)),
        data=Transition(
            observation=rng.normal(size=(n,) + obs).astype(np.float32),
            action=rng.uniform(low, high, (n,) + spec.actions.shape).astype(np.float32),
            reward=(rng.normal(size=n) if reward is None else np.full(n, reward)).astype(np.float32),
            discount=np.full(n, 0.99, np.float32),
            next_observation=rng.normal(size=(n,) + obs).astype(np.float32),
        ),
    )


class FakeParallelEnv:
    """A scripted PettingZoo Parallel-API environment whose agents leave at known steps.

    Agent i of `possible_agents` has a Box observation of shape `observation_sizes[i]` (2 by default) and a
    Discrete(3) action. It leaves after `leave_at[i]` steps: terminated if `terminate[i]`, else truncated; the
    episode ends when the last agent leaves. Observation of agent i after step t (t = 0 at reset):
    `np.full(size, 100 * i + t)`. Reward of agent i for its action a at step t (t = 1, 2, ...): `t + 10 * i + a`.
    Every joint action passed to `step` is kept in `joint_actions`; `seeds` records what each reset was given.
    """

    metadata = {"name": "fake_parallel"}

    def __init__(self, possible_agents=("a", "b", "c"), leave_at=(3, 5, 6), terminate=(True, False, False),
                 observation_sizes=None):
        from gymnasium import spaces

        self.possible_agents = list(possible_agents)
        self.leave_at = dict(zip(possible_agents, leave_at))
        self.terminate = dict(zip(possible_agents, terminate))
        sizes = observation_sizes or (2,) * len(possible_agents)
        self._observation_spaces = {
            agent: spaces.Box(-np.inf, np.inf, (size,), np.float32) for agent, size in zip(possible_agents, sizes)
        }
        self._action_space = spaces.Discrete(3)
        self.agents: list = []
        self.joint_actions: list = []
        self.seeds: list = []
        self._t = 0

    def observation_space(self, agent):
        return self._observation_spaces[agent]

    def action_space(self, agent):
        return self._action_space

    def _observation(self, agent):
        index = self.possible_agents.index(agent)
        return np.full(self._observation_spaces[agent].shape, 100 * index + self._t, np.float32)

    def reset(self, seed=None, options=None):
        self.seeds.append(seed)
        self._t = 0
        self.agents = list(self.possible_agents)
        return {agent: self._observation(agent) for agent in self.agents}, {agent: {} for agent in self.agents}

    def step(self, actions):
        assert set(actions) == set(self.agents), (actions, self.agents)  # PettingZoo: actions of live agents only
        self.joint_actions.append(dict(actions))
        self._t += 1
        observations, rewards, terminations, truncations = {}, {}, {}, {}
        for agent in self.agents:
            index = self.possible_agents.index(agent)
            observations[agent] = self._observation(agent)
            rewards[agent] = float(self._t + 10 * index + actions[agent])
            leaves = self._t >= self.leave_at[agent]
            terminations[agent] = leaves and self.terminate[agent]
            truncations[agent] = leaves and not self.terminate[agent]
        self.agents = [agent for agent in self.agents if not (terminations[agent] or truncations[agent])]
        return observations, rewards, terminations, truncations, {agent: {} for agent in observations}

    def close(self):
        pass


def fake_multiagent_environment(seed: int, observation_sizes=None) -> dm_env.Environment:
    """`FakeParallelEnv` (agents leaving after 3, 5 and 6 steps) through the PettingZoo adapter; an
    `ExperimentConfig.environment_factory` for multi-agent agents. `observation_sizes` makes the specs differ."""
    from acmelike.wrappers.pettingzoo_adapter import PettingZooToDmEnv

    return PettingZooToDmEnv(FakeParallelEnv(observation_sizes=observation_sizes), seed=seed)
