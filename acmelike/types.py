"""The data that flows between layers: environment steps, transitions, replay samples."""

from typing import Any, NamedTuple

import numpy as np

NestedArray = Any  # a pytree of arrays
NestedSpec = Any  # a pytree of dm_env.specs.Array
PRNGKey = Any  # jax.Array holding a PRNG key
Params = Any  # a pytree of network parameters


class Transition(NamedTuple):
    """One (possibly n-step) transition, as stored by `NStepTransitionAdder`.

    `discount` is the *total* discount from `observation` to `next_observation`,
    including the agent's gamma: a TD target is `reward + discount * v(next_observation)`.
    """

    observation: NestedArray
    action: NestedArray
    reward: NestedArray
    discount: NestedArray
    next_observation: NestedArray
    extras: NestedArray = ()


class Step(NamedTuple):
    """One environment step, as stored by `SequenceAdder` and `EpisodeAdder`.

    `reward` and `discount` are those received *after* taking `action` in `observation`.
    The final step of an episode holds the last observation and zeros elsewhere.
    """

    observation: NestedArray
    action: NestedArray
    reward: NestedArray
    discount: NestedArray
    start_of_episode: NestedArray
    extras: NestedArray = ()


class SampleInfo(NamedTuple):
    """Where a replay sample came from: what prioritized replay needs to correct and update."""

    key: np.ndarray  # uint64 item keys, for priority updates
    probability: np.ndarray  # sampling probability of each item
    table_size: np.ndarray  # items in the table when sampled


class ReplaySample(NamedTuple):
    info: SampleInfo
    data: NestedArray
