"""GymnasiumToDmEnv: a gymnasium.Env seen as a dm_env.Environment, and `make_gymnasium_environment`.

Mapping of the episode protocol:

    gymnasium                         dm_env
    reset(seed) -> obs, info          restart(obs)                   reward/discount None
    step -> terminated                termination(reward, obs)       discount 0.0
    step -> truncated (only)          truncation(reward, obs)        discount 1.0
    step -> neither                   transition(reward, obs)        discount 1.0
    step after a LAST timestep        reset() (dm_env auto-reset)

Spaces: `Discrete(n, start)` <-> `DiscreteArray(n, int64)` (shifted so values start at 0), `Box` <->
`BoundedArray` (or `Array` for observations whose bounds are not all finite). Any other space is a TypeError.

`single_precision=True` gives what `SinglePrecisionWrapper(GymnasiumToDmEnv(env))` gives (float32/int32 specs,
observations, rewards and discounts), in one layer: the per-step cost is the environment loop's floor.
"""

import difflib
import operator
from typing import Optional

import dm_env
import gymnasium
import numpy as np
from dm_env import specs
from gymnasium import spaces

from acmelike.wrappers.single_precision import single_precision_spec

# Hot-path constants: enum members and the TimeStep constructor looked up once (a namedtuple's __new__ and an
# Enum class attribute lookup each cost more than a gymnasium CartPole step's own bookkeeping).
_FIRST, _MID, _LAST = dm_env.StepType.FIRST, dm_env.StepType.MID, dm_env.StepType.LAST
_TimeStep = dm_env.TimeStep
_new = tuple.__new__
_F32_ZERO, _F32_ONE = np.float32(0.0), np.float32(1.0)


def _float32_reward(reward) -> np.float32:
    reward = float(reward)
    if reward == 1.0:
        return _F32_ONE  # immutable, so shared: many rewards are 0 or 1
    if reward == 0.0:
        return _F32_ZERO
    return np.float32(reward)

_SUPPORTED_SPACES = "gymnasium.spaces.Discrete and gymnasium.spaces.Box"
# Registered ids from these modules import with gymnasium alone (no box2d, mujoco, ...).
NO_EXTRA_DEPENDENCY_MODULES = ("gymnasium.envs.classic_control", "gymnasium.envs.toy_text")


def space_to_spec(space: gymnasium.Space, name: str, what: str):
    """The dm_env spec of a gymnasium Discrete or Box `space`; TypeError naming `what` (observation/action) else."""
    if isinstance(space, spaces.Discrete):
        return specs.DiscreteArray(num_values=int(space.n), dtype=np.int64, name=name)
    if isinstance(space, spaces.Box):
        low, high = np.asarray(space.low), np.asarray(space.high)
        if what == "observation" and not (np.all(np.isfinite(low)) and np.all(np.isfinite(high))):
            return specs.Array(shape=space.shape, dtype=space.dtype, name=name)
        return specs.BoundedArray(shape=space.shape, dtype=space.dtype, minimum=low, maximum=high, name=name)
    raise TypeError(
        f"GymnasiumToDmEnv does not support the {what} space {space!r} ({type(space).__name__}); "
        f"supported spaces are {_SUPPORTED_SPACES}. Wrap the gymnasium env (e.g. gymnasium.wrappers."
        f"FlattenObservation) to turn it into a supported space."
    )


class GymnasiumToDmEnv(dm_env.Environment):
    """Adapts a `gymnasium.Env` with Discrete or Box spaces to `dm_env.Environment`.

    Args:
      env: the gymnasium environment (as returned by `gymnasium.make`, so usually with its TimeLimit).
      seed: passed to `env.reset(seed=...)` on the first reset only; later episodes continue that RNG, so the
        same seed gives the same sequence of episodes. None leaves the env unseeded.
      single_precision: report float32/int32 where gymnasium has float64/int64 (specs, observations, rewards,
        discounts), exactly as `SinglePrecisionWrapper` does; actions are still validated against the space.

    Rewards are Python floats (reward spec: float64 scalar); discounts are 0.0 or 1.0 (float64 in [0, 1]); with
    `single_precision`, np.float32 scalars and float32 specs.
    Actions are validated against `action_spec()`: a ValueError names the spec and what was received.
    """

    def __init__(self, env: gymnasium.Env, seed: Optional[int] = None, *, single_precision: bool = False):
        self._env = env
        self._seed = seed
        self._seeded = False
        self._reset_next_step = True
        observation_spec = space_to_spec(env.observation_space, "observation", "observation")
        # Actions are converted and validated against the gymnasium space's own spec.
        self._gym_action_spec = space_to_spec(env.action_space, "action", "action")
        reward_spec = specs.Array(shape=(), dtype=np.float64, name="reward")
        discount_spec = specs.BoundedArray(shape=(), dtype=np.float64, minimum=0.0, maximum=1.0, name="discount")
        if single_precision:
            observation_spec, reward_spec, discount_spec = (
                single_precision_spec(spec) for spec in (observation_spec, reward_spec, discount_spec)
            )
            self._action_spec = single_precision_spec(self._gym_action_spec)
            self._reward, self._discount_zero, self._discount_one = _float32_reward, _F32_ZERO, _F32_ONE
        else:
            self._action_spec = self._gym_action_spec
            self._reward, self._discount_zero, self._discount_one = float, 0.0, 1.0
        self._reward_one = self._reward(1.0)
        self._observation_spec, self._reward_spec, self._discount_spec = observation_spec, reward_spec, discount_spec
        # Discrete spaces may start at `start != 0`; dm_env's DiscreteArray always starts at 0.
        self._action_start = int(env.action_space.start) if isinstance(env.action_space, spaces.Discrete) else 0
        self._discrete_action = isinstance(env.action_space, spaces.Discrete)
        self._num_actions = int(env.action_space.n) if self._discrete_action else 0
        self._to_gym_action = self._to_discrete_action if self._discrete_action else self._to_box_action
        self._observation_start = (
            int(env.observation_space.start) if isinstance(env.observation_space, spaces.Discrete) else 0
        )
        self._observation_dtype = self._observation_spec.dtype

    @property
    def gymnasium_env(self) -> gymnasium.Env:
        return self._env

    def _name(self) -> str:
        spec = getattr(self._env, "spec", None)
        return spec.id if spec is not None else type(self._env.unwrapped).__name__

    def _observation(self, observation) -> np.ndarray:
        if self._observation_start:
            observation = observation - self._observation_start
        if type(observation) is np.ndarray and observation.dtype is self._observation_dtype:
            return observation  # what np.asarray would return, at a fraction of its cost
        return np.asarray(observation, dtype=self._observation_dtype)

    def reset(self) -> dm_env.TimeStep:
        if self._seeded:
            observation, _ = self._env.reset()
        else:
            observation, _ = self._env.reset(seed=self._seed)
            self._seeded = True
        self._reset_next_step = False
        return _new(_TimeStep, (_FIRST, None, None, self._observation(observation)))

    def step(self, action) -> dm_env.TimeStep:
        if self._reset_next_step:
            return self.reset()
        observation, reward, terminated, truncated, _ = self._env.step(self._to_gym_action(action))
        observation = self._observation(observation)
        reward = self._reward_one if reward == 1.0 else self._reward(reward)  # the common reward without a call
        if terminated:
            self._reset_next_step = True
            return _new(_TimeStep, (_LAST, reward, self._discount_zero, observation))
        if truncated:
            self._reset_next_step = True
            return _new(_TimeStep, (_LAST, reward, self._discount_one, observation))
        return _new(_TimeStep, (_MID, reward, self._discount_one, observation))

    def _invalid_action(self, action, problem: str) -> ValueError:
        received = f"{action!r} (type {type(action).__name__}, shape {np.shape(action)}"
        dtype = getattr(action, "dtype", None)
        received += f", dtype {dtype})" if dtype is not None else ")"
        return ValueError(
            f"Invalid action for {self._name()}: {problem}. Expected an action matching {self._gym_action_spec!r}; "
            f"received {received}."
        )

    def _to_discrete_action(self, action) -> int:
        try:
            index = operator.index(action)  # Python/NumPy/JAX integer scalars, 0-d integer arrays.
        except TypeError:
            raise self._invalid_action(action, "expected a scalar integer") from None
        if not 0 <= index < self._num_actions:
            raise self._invalid_action(action, f"out of range [0, {self._num_actions - 1}]")
        return index + self._action_start if self._action_start else index

    def _to_box_action(self, action) -> np.ndarray:
        spec = self._gym_action_spec
        try:
            array = np.asarray(action, dtype=spec.dtype)
        except (TypeError, ValueError):
            raise self._invalid_action(action, f"cannot convert to {spec.dtype}") from None
        if array.shape != spec.shape:
            raise self._invalid_action(action, f"wrong shape {array.shape}, expected {spec.shape}")
        if not (np.all(array >= spec.minimum) and np.all(array <= spec.maximum)):
            raise self._invalid_action(
                action, f"out of range [{spec.minimum}, {spec.maximum}] (NaN is out of range too)"
            )
        return array

    def observation_spec(self):
        return self._observation_spec

    def action_spec(self):
        return self._action_spec

    def reward_spec(self):
        return self._reward_spec

    def discount_spec(self):
        return self._discount_spec

    def close(self) -> None:
        self._env.close()


def _unknown_environment_error(name: str) -> ValueError:
    registry = gymnasium.envs.registry
    ready = sorted(
        env_id
        for env_id, env_spec in registry.items()
        if isinstance(env_spec.entry_point, str) and env_spec.entry_point.startswith(NO_EXTRA_DEPENDENCY_MODULES)
    )
    suggestions = difflib.get_close_matches(name, list(registry), n=3, cutoff=0.6)
    message = f"Unknown gymnasium environment {name!r}."
    if suggestions:
        message += " Did you mean: " + ", ".join(repr(s) for s in suggestions) + "?"
    message += (
        f"\nAvailable with gymnasium alone (classic control, toy text): {', '.join(ready)}."
        f"\n{len(registry) - len(ready)} more registered ids need extra packages (box2d, mujoco, ...) or are "
        f"functional JAX environments (see gymnasium.pprint_registry())."
    )
    return ValueError(message)


def check_gymnasium_id(name: str) -> None:
    """Raises a ValueError if gymnasium has no environment `name`, suggesting close matches and listing the
    ids that need no extra packages. Ids of the form "module:EnvName-v0" are left for gymnasium to resolve (only
    for ids the user typed: an id read from a file goes through `check_environment_id_from_file` first).
    acmelike's own ids (`acmelike/CartPoleNoVelocity-v1`, MinAtar's when installed) are registered first."""
    from acmelike import environments

    environments.register()
    if ":" not in name and name not in gymnasium.envs.registry:
        raise _unknown_environment_error(name)


def check_environment_id_from_file(name: str, source: str) -> None:
    """Refuses an environment id read back from a file (a run's config.json, a snapshot's metadata) that would
    make gymnasium import a module: ValueError naming `source` and saying how to go on.

    gymnasium resolves "module:EnvName-v0" by importing `module` first, so such an id in a file would let that
    file choose code to run (a run directory's own `payload.py`, say). It is accepted only as the user types it on
    the command line (`--env`), which passes it to `check_gymnasium_id` instead. Any other id must then be one a
    registry already knows (gymnasium's, acmelike's, the multi-agent and JAX suites'), which the caller's usual
    checks enforce: a registered id runs only installed code.
    """
    if ":" in name:
        module = name.split(":", 1)[0]
        raise ValueError(
            f"{source} names the environment {name!r}, which would import the Python module {module!r}; an id "
            f"read from a file is never allowed to import code. If you trust that module, type the id yourself: "
            f"--env {name}."
        )


def make_gymnasium_environment(name: str, seed: int) -> dm_env.Environment:
    """`GymnasiumToDmEnv(gymnasium.make(name), seed=seed, single_precision=True)`.

    Observations, rewards and discounts come out as float32 (int32 for integers), as JAX agents want.
    An unknown `name` is a ValueError suggesting close matches and listing the ids that need no extra packages.
    Ids of the form "module:EnvName-v0" are passed to gymnasium, which imports the module first.
    """
    check_gymnasium_id(name)
    return GymnasiumToDmEnv(gymnasium.make(name), seed=seed, single_precision=True)
