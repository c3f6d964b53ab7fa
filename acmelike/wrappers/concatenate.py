"""ConcatObservationWrapper: a nest of array observations as one float32 vector, in an order its spec records.

    environment = ConcatObservationWrapper(suite.load("cartpole", "swingup"))
    environment.observation_spec()   # Array(shape=(5,), dtype=float32, name='position[0:3],velocity[3:5]')

The order is fixed by the spec alone: a dict's keys sorted (as Acme's ConcatObservationWrapper orders them, through
dm-tree), so the layout never depends on the order a dict was built in; lists and tuples in their own order. Each
leaf is flattened (C order) and cast to float32, bools to 0 and 1. The spec's name lists every leaf's path (keys
joined by '/') with its slice of the vector, so a reader, and a snapshot's metadata.json, sees which entries are which.

Every single-agent network in acmelike takes one array; none takes a nest (a torso per key). So
`launch.make_experiment_config` applies this wrapper by itself (`concatenate_state_nest`) to a single-agent
environment whose observations are a nest of state arrays (`is_state_nest`): a Control Suite task's dict, say.
A multi-agent environment's dict, keyed by agent id, is left alone. A nest holding frames (rank 3 or more) or
integers is not concatenated automatically: an MLP should not read an image as a flat vector, nor an index as a
number.
"""

from typing import Any, List, Tuple

import dm_env
import numpy as np
from dm_env import specs

from acmelike.wrappers.base import EnvironmentWrapper

# A leaf of rank above this is an image (frames [height, width, channels]), not a state vector or matrix.
MAX_STATE_RANK = 2


def nest_leaves(nest: Any, path: str = "") -> List[Tuple[str, Any]]:
    """The (path, leaf) pairs of a nest of dicts, lists and tuples, in the wrapper's order (dict keys sorted)."""
    if isinstance(nest, dict):
        return [pair for key in sorted(nest) for pair in nest_leaves(nest[key], _join(path, str(key)))]
    if isinstance(nest, (list, tuple)):
        return [pair for index, value in enumerate(nest) for pair in nest_leaves(value, _join(path, str(index)))]
    return [(path, nest)]


def _join(path: str, key: str) -> str:
    return f"{path}/{key}" if path else key


def is_state_array(spec: Any) -> bool:
    """Whether `spec` is a floating-point or bool array of rank 0 to 2: state features, not frames or indices."""
    return (isinstance(spec, specs.Array) and len(spec.shape) <= MAX_STATE_RANK
            and (np.issubdtype(spec.dtype, np.floating) or np.dtype(spec.dtype) == np.bool_))


def is_state_nest(spec: Any) -> bool:
    """Whether `spec` is a nest (not one array) of state arrays (`is_state_array`), which concatenate into one
    vector without losing a structure a network should see."""
    if isinstance(spec, specs.Array):
        return False
    leaves = nest_leaves(spec)
    return bool(leaves) and all(is_state_array(leaf) for _, leaf in leaves)


def concatenated_spec(spec: Any) -> specs.Array:
    """The float32 vector spec of a nest of array specs; its name records each leaf's path and slice."""
    parts, start = [], 0
    for path, leaf in nest_leaves(spec):
        size = int(np.prod(leaf.shape))
        parts.append(f"{path}[{start}:{start + size}]")
        start += size
    return specs.Array(shape=(start,), dtype=np.float32, name=",".join(parts))


class ConcatObservationWrapper(EnvironmentWrapper):
    """Concatenates a nest of array observations into one float32 vector (see the module docstring for the order).

    Actions, rewards and discounts pass through unchanged. A single array observation is refused: there is nothing
    to concatenate, and its own shape (an image's, say) is what its network wants.
    """

    def __init__(self, environment: dm_env.Environment):
        super().__init__(environment)
        spec = environment.observation_spec()
        if isinstance(spec, specs.Array):
            raise ValueError(
                f"ConcatObservationWrapper concatenates a nest (dict, list, tuple) of observations, but this "
                f"environment's observation is one array already: {spec!r}. Use the environment as it is."
            )
        self._observation_spec = concatenated_spec(spec)

    def _concatenate(self, timestep: dm_env.TimeStep) -> dm_env.TimeStep:
        leaves = [np.asarray(leaf, dtype=np.float32).reshape(-1) for _, leaf in nest_leaves(timestep.observation)]
        vector = np.concatenate(leaves)
        if vector.shape != self._observation_spec.shape:
            raise ValueError(
                f"An observation of {vector.size} values does not fit the observation spec's layout "
                f"{self._observation_spec.name} ({self._observation_spec.shape[0]} values): the environment's "
                f"observations must have the shapes its spec says."
            )
        return timestep._replace(observation=vector)

    def reset(self) -> dm_env.TimeStep:
        return self._concatenate(self._environment.reset())

    def step(self, action) -> dm_env.TimeStep:
        return self._concatenate(self._environment.step(action))

    def observation_spec(self) -> specs.Array:
        return self._observation_spec


def concatenate_state_nest(environment: dm_env.Environment) -> dm_env.Environment:
    """`environment` in a ConcatObservationWrapper if it acts for one agent (one action array) and observes a nest
    of state arrays (`is_state_nest`); otherwise `environment` itself. What every network of a single agent needs:
    none takes a nest."""
    if isinstance(environment.action_spec(), specs.Array) and is_state_nest(environment.observation_spec()):
        return ConcatObservationWrapper(environment)
    return environment
