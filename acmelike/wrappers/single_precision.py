"""SinglePrecisionWrapper: float64 -> float32 and int64 -> int32, in specs and in every timestep."""

from typing import Any, Callable

import dm_env
import numpy as np
from dm_env import specs

from acmelike.wrappers.base import EnvironmentWrapper

_SINGLE = {np.dtype(np.float64): np.dtype(np.float32), np.dtype(np.int64): np.dtype(np.int32)}


def _single_dtype(dtype) -> np.dtype:
    dtype = np.dtype(dtype)
    return _SINGLE.get(dtype, dtype)


def _cast_bound(bound: np.ndarray, dtype: np.dtype) -> np.ndarray:
    if np.issubdtype(dtype, np.integer):
        info = np.iinfo(dtype)
        bound = np.clip(bound, info.min, info.max)
    return np.asarray(bound).astype(dtype)


def _map_nest(fn, nest):
    """Applies fn to the leaves of a nest of dicts, lists and (named) tuples."""
    if isinstance(nest, dict):
        return type(nest)((key, _map_nest(fn, value)) for key, value in nest.items())
    if isinstance(nest, tuple) and hasattr(nest, "_fields"):
        return type(nest)(*(_map_nest(fn, value) for value in nest))
    if isinstance(nest, (list, tuple)):
        return type(nest)(_map_nest(fn, value) for value in nest)
    return fn(nest)


def single_precision_spec(spec):
    """`spec` with 64-bit dtypes narrowed to 32 bits (bounds cast too); other specs unchanged."""
    if not isinstance(spec, specs.Array):
        return spec
    dtype = _single_dtype(spec.dtype)
    if dtype == spec.dtype:
        return spec
    if isinstance(spec, specs.DiscreteArray):
        return specs.DiscreteArray(num_values=spec.num_values, dtype=dtype, name=spec.name)
    if isinstance(spec, specs.BoundedArray):
        return specs.BoundedArray(
            shape=spec.shape,
            dtype=dtype,
            minimum=_cast_bound(spec.minimum, dtype),
            maximum=_cast_bound(spec.maximum, dtype),
            name=spec.name,
        )
    return specs.Array(shape=spec.shape, dtype=dtype, name=spec.name)


def _single_value(value):
    if isinstance(value, (np.ndarray, np.generic)):
        dtype = _SINGLE.get(value.dtype)
        return value if dtype is None else value.astype(dtype)
    if isinstance(value, float):
        return np.float32(value)
    if isinstance(value, int) and not isinstance(value, bool):
        return np.int32(value)
    return value


def _convert_nest(value):
    return None if value is None else _map_nest(_single_value, value)


def _converter(spec) -> Callable[[Any], Any]:
    """A per-step conversion function chosen once from the wrapped environment's spec.

    A single array spec gets a direct cast (or nothing, if its dtype stays); nests are walked leaf by leaf.
    `None` (the reward and discount of a FIRST timestep) passes through.
    """
    if not isinstance(spec, specs.Array):
        return _convert_nest
    target = _single_dtype(spec.dtype)
    if target == spec.dtype:
        return _identity
    if spec.shape == ():
        scalar = target.type  # np.float32 / np.int32 of a Python number, NumPy scalar or 0-d array
        zero, one = scalar(0), scalar(1)  # immutable, so shared: most discounts (and many rewards) are 0 or 1

        def convert_scalar(value):
            if value is None:
                return None
            if value == 1:
                return one
            if value == 0:
                return zero
            return scalar(value)

        return convert_scalar
    return lambda value: None if value is None else np.asarray(value, dtype=target)


def _identity(value):
    return value


class SinglePrecisionWrapper(EnvironmentWrapper):
    """Casts float64 to float32 and int64 to int32 in observations, rewards, discounts and their specs.

    Works over nests (dicts, lists, tuples, namedtuples) of arrays and scalars; Python floats/ints in a nest
    become np.float32/np.int32. What is cast is decided once from the wrapped environment's specs: a single
    array spec whose dtype stays (e.g. CartPole's float32 observation) is passed through untouched, which keeps
    the per-step cost to one cast per narrowed value.

    Actions carrying the narrowed dtype are widened back for the wrapped environment: an int32/float32 scalar
    becomes a Python int/float, an array is cast to the spec's dtype. Other actions pass through unchanged for
    the wrapped environment to validate (a float for a discrete action is not truncated here). Integer bounds
    that do not fit int32 are clipped to its range.
    """

    def __init__(self, environment: dm_env.Environment):
        super().__init__(environment)
        self._observation_spec = _map_nest(single_precision_spec, environment.observation_spec())
        self._action_spec = _map_nest(single_precision_spec, environment.action_spec())
        self._reward_spec = _map_nest(single_precision_spec, environment.reward_spec())
        self._discount_spec = _map_nest(single_precision_spec, environment.discount_spec())
        self._inner_action_spec = environment.action_spec()
        self._convert_observation = _converter(environment.observation_spec())
        self._convert_reward = _converter(environment.reward_spec())
        self._convert_discount = _converter(environment.discount_spec())
        self._single_action = isinstance(self._inner_action_spec, specs.Array)
        if self._single_action:
            inner = self._inner_action_spec
            narrow = _single_dtype(inner.dtype)
            self._narrow_action_dtype = None if narrow == inner.dtype else narrow
            dtype = inner.dtype
            if inner.shape == ():
                # A Python int/float is what int64/float64 scalars convert from (np.asarray(3).dtype is int64)
                # and is several times cheaper to make than a NumPy scalar.
                self._widen_action = int if np.issubdtype(dtype, np.integer) else float
            else:
                self._widen_action = lambda action: np.asarray(action, dtype=dtype)

    def _convert_timestep(self, timestep: dm_env.TimeStep) -> dm_env.TimeStep:
        return dm_env.TimeStep(
            timestep.step_type,
            self._convert_reward(timestep.reward),
            self._convert_discount(timestep.discount),
            self._convert_observation(timestep.observation),
        )

    def _action(self, action: Any):
        if self._single_action:
            narrow = self._narrow_action_dtype
            if narrow is not None and getattr(action, "dtype", None) == narrow:
                return self._widen_action(action)
            return action
        return _cast_action(self._inner_action_spec, action)

    def reset(self) -> dm_env.TimeStep:
        return self._convert_timestep(self._environment.reset())

    def step(self, action) -> dm_env.TimeStep:
        return self._convert_timestep(self._environment.step(self._action(action)))

    def observation_spec(self):
        return self._observation_spec

    def action_spec(self):
        return self._action_spec

    def reward_spec(self):
        return self._reward_spec

    def discount_spec(self):
        return self._discount_spec


def _cast_action(spec_nest, action):
    """Widens each action leaf that has the single-precision dtype of its spec leaf back to the spec's dtype.

    Other actions pass through unchanged, so the wrapped environment validates them (a float given for a
    discrete action is not silently truncated to an integer here).
    """
    if isinstance(spec_nest, specs.Array):
        dtype = getattr(action, "dtype", None)
        if dtype is not None and dtype != spec_nest.dtype and dtype == _single_dtype(spec_nest.dtype):
            return np.asarray(action, dtype=spec_nest.dtype)
        return action
    if isinstance(spec_nest, dict):
        return type(action)((key, _cast_action(spec_nest[key], value)) for key, value in action.items())
    if isinstance(spec_nest, tuple) and hasattr(spec_nest, "_fields"):
        return type(action)(*(_cast_action(s, a) for s, a in zip(spec_nest, action)))
    if isinstance(spec_nest, (list, tuple)):
        return type(action)(_cast_action(s, a) for s, a in zip(spec_nest, action))
    return action
