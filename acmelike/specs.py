"""EnvironmentSpec: what an agent must know about an environment before it builds networks."""

from typing import NamedTuple

import dm_env
import numpy as np
from dm_env import specs

from acmelike.types import NestedSpec
from acmelike.wrappers.concatenate import MAX_STATE_RANK, is_state_array, nest_leaves


class EnvironmentSpec(NamedTuple):
    observations: NestedSpec
    actions: NestedSpec
    rewards: NestedSpec
    discounts: NestedSpec


def make_environment_spec(environment: dm_env.Environment) -> EnvironmentSpec:
    """Reads the four specs of a dm_env environment."""
    return EnvironmentSpec(
        observations=environment.observation_spec(),
        actions=environment.action_spec(),
        rewards=environment.reward_spec(),
        discounts=environment.discount_spec(),
    )


def num_discrete_actions(spec: EnvironmentSpec, *, agent: str) -> int:
    """The number of actions of a discrete action spec, or a ValueError naming agent and spec."""
    actions = spec.actions
    if not isinstance(actions, specs.DiscreteArray):
        raise ValueError(
            f"{agent} needs a discrete action space (dm_env.specs.DiscreteArray), but the environment's action "
            f"spec is {actions!r}. Use an agent for continuous actions, or an environment with Discrete actions."
        )
    return int(actions.num_values)


def flat_observation_size(spec: EnvironmentSpec, *, agent: str) -> int:
    """Size of a single array observation an MLP takes flattened, or a ValueError naming agent and spec.

    Floating-point arrays and bool arrays (MinAtar's binary object channels, read as 0 and 1) qualify. Integer
    observations do not: a Discrete observation's index would need a one-hot encoding, and uint8 frames a scaling
    and a conv torso.
    """
    observations = spec.observations
    if not isinstance(observations, specs.Array):
        raise ValueError(_nest_message(observations, agent))
    dtype = np.dtype(observations.dtype)
    if not (np.issubdtype(dtype, np.floating) or dtype == np.bool_):
        from acmelike.networks.torsos import TORSO_NAMES  # here only: flax need not load for a spec check

        raise ValueError(
            f"{agent}'s MLP network needs one floating-point or bool array observation (a gymnasium Box), but the "
            f"environment's observation spec is {observations!r}. Discrete observations (e.g. FrozenLake's, "
            f"Blackjack's) would need a one-hot encoding, which acmelike does not provide yet: choose an environment "
            f"with Box observations (e.g. CartPole-v1, Acrobot-v1). Image frames [height, width, channels] take a "
            f"conv torso where the agent has one (DQN, PPO, R2D2, IMPALA: --config "
            f"torso={'|'.join(TORSO_NAMES[1:])})."
        )
    return int(np.prod(observations.shape))


def _nest_message(observations, agent: str) -> str:
    """Why a nest of observations did not become one vector, and what would make it one."""
    leaves = nest_leaves(observations)
    described = ", ".join(f"{path or '(root)'} {getattr(leaf, 'shape', '?')} {getattr(leaf, 'dtype', type(leaf))}"
                          for path, leaf in leaves)
    unfit = [path or "(root)" for path, leaf in leaves if not is_state_array(leaf)]
    reason = (f"it holds {', '.join(unfit)}, which is not a floating-point or bool array of rank 0-{MAX_STATE_RANK} "
              f"(an image, an integer or a discrete value), so it is not flattened into a vector by itself"
              if unfit else "it was not concatenated (an environment given to the runner directly, not through "
              "launch.make_experiment_config)")
    return (
        f"{agent}'s MLP network needs one floating-point or bool array observation, but the environment's "
        f"observation spec is a nest of {len(leaves)}: {described}. acmelike.wrappers.ConcatObservationWrapper "
        f"concatenates a nest into one float32 vector, and launch.make_experiment_config applies it by itself to a "
        f"nest of state arrays; {reason}. Drop or encode those observations in a wrapper of your own, or wrap the "
        f"environment in ConcatObservationWrapper to flatten everything anyway."
    )


class ActionBounds(NamedTuple):
    """Per-dimension float32 bounds of a continuous action, each inside the environment's own bounds.

    `minimum`/`maximum` are `[A]` float32 arrays; every float32 value in `[minimum, maximum]` passes the
    environment's bounds check whatever dtype it is converted to (see `continuous_action_bounds`).
    """

    minimum: np.ndarray
    maximum: np.ndarray

    @property
    def size(self) -> int:
        return int(self.minimum.shape[0])


def _float32_inside(bound: np.ndarray, exact: bool, toward: float) -> np.ndarray:
    """The float32 bound nearest `bound` on its inner side (`toward` = +inf for a minimum, -inf for a maximum).

    An exact bound (float64 or wider) is rounded inward only where float32 rounding crossed it. A float32 bound
    may itself be a rounding of a float64 bound we no longer see (SinglePrecisionWrapper), so it moves one float32
    step inward: a float32 rounding is within half a step of the original, so one step lands inside it.
    """
    single = bound.astype(np.float32)
    if exact:
        crossed = single < bound if toward > 0 else single > bound
        return np.where(crossed, np.nextafter(single, np.float32(toward)), single).astype(np.float32)
    return np.nextafter(single, np.float32(toward)).astype(np.float32)


def continuous_action_bounds(spec: EnvironmentSpec, *, agent: str) -> ActionBounds:
    """The bounds of a flat, bounded, floating-point action spec, or a ValueError naming agent and spec.

    Actions are computed in float32. So that rounding never takes an action outside the environment's bounds
    (the gymnasium adapter rejects it), the bounds are moved inward to float32 values that lie inside them; at
    most one float32 step (about 1e-7 relative) is lost at each end.

    Infinite bounds are an error: squashed and clipped policies need a finite box. Give the environment finite
    bounds (e.g. gymnasium.wrappers.ClipAction, or RescaleAction to [-1, 1]).
    """
    actions = spec.actions
    fix = "Use an agent for discrete actions, or an environment with Box actions."
    if isinstance(actions, specs.DiscreteArray) or not isinstance(actions, specs.BoundedArray):
        raise ValueError(
            f"{agent} needs a continuous action space (dm_env.specs.BoundedArray of floats), but the environment's "
            f"action spec is {actions!r}. {fix}"
        )
    if not np.issubdtype(actions.dtype, np.floating) or len(actions.shape) != 1:
        raise ValueError(
            f"{agent} needs a flat floating-point action vector (a BoundedArray of shape (A,)), but the environment's "
            f"action spec is {actions!r}. Use an environment with a 1-d Box action space (reshape a multi-dimensional "
            f"Box in a wrapper)."
        )
    minimum = np.broadcast_to(np.asarray(actions.minimum), actions.shape)
    maximum = np.broadcast_to(np.asarray(actions.maximum), actions.shape)
    if not (np.all(np.isfinite(minimum)) and np.all(np.isfinite(maximum))):
        raise ValueError(
            f"{agent} needs finite action bounds, but the environment's action spec is {actions!r} (minimum "
            f"{minimum}, maximum {maximum}). Bound the actions, e.g. with gymnasium.wrappers.ClipAction or "
            f"RescaleAction(env, -1.0, 1.0)."
        )
    if not np.all(minimum < maximum):
        raise ValueError(f"{agent} needs minimum < maximum in every action dimension; the action spec is {actions!r}.")
    exact = np.dtype(actions.dtype).itemsize > 4
    return ActionBounds(
        minimum=_float32_inside(minimum.astype(np.float64), exact, np.inf),
        maximum=_float32_inside(maximum.astype(np.float64), exact, -np.inf),
    )
