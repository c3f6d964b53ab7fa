"""MPO's actor core: sample the diagonal Gaussian policy in the unit box, clip, rescale to the action bounds."""

from typing import Callable, Tuple

import jax

from acmelike.actors import ActorCore, to_bounds
from acmelike.actors.continuous import ContinuousActorState
from acmelike.specs import ActionBounds


def _no_extras(state):
    return ()


def clipped_gaussian_core(
    policy_fn: Callable[[object, jax.Array], Tuple[jax.Array, jax.Array]], bounds: ActionBounds, greedy: bool = False
) -> ActorCore:
    """Acts with `policy_fn(params, [1, ...]) -> ([1, A] mean, [1, A] stddev)`, a Gaussian over the unit box.

    Samples mean + stddev * N(0, 1), or takes the mean if `greedy` (evaluation); `to_bounds` clips the action to
    the box and rescales it to `bounds`. No extras.
    """

    def select_action(params, observation, state):
        key, sample_key = jax.random.split(state.key)
        mean, stddev = policy_fn(params, observation[None])
        unit = mean[0] if greedy else mean[0] + stddev[0] * jax.random.normal(sample_key, mean[0].shape, mean.dtype)
        return to_bounds(unit, bounds), ContinuousActorState(key=key)

    return ActorCore(init=lambda key: ContinuousActorState(key=key), select_action=select_action, get_extras=_no_extras)
