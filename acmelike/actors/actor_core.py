"""ActorCore: a policy as pure functions, so actors can be jitted, batched or run on another device."""

import dataclasses
from typing import Any, Callable, Generic, Tuple, TypeVar

State = TypeVar("State")


def _keep(state):
    return state


@dataclasses.dataclass(frozen=True)
class ActorCore(Generic[State]):
    """The pure parts of an actor.

    init(key) -> state                        the actor's state for its whole life: rng, step count, recurrent state
    on_episode_start(state) -> state          called at every episode's first timestep (before its first action):
                                              a recurrent core resets its memory here, while an exploration clock
                                              (e.g. DQN's epsilon schedule) keeps running. Identity by default.
    select_action(params, observation, state) -> (action, state)   one unbatched observation in, one action out
    get_extras(state) -> extras               what the adder stores beside the action just selected

    `get_extras` is called on the state `select_action` returned, but must describe the state that *chose* the
    action: its log-probability, or the recurrent state *before* the step (a core that needs it keeps a copy of
    the pre-step state in its state). Extras must be a pytree of arrays whose shapes do not depend on the step,
    because replay tables derive their signature from them (`acmelike.builders.policy_extras_spec`).

    A `GenericActor` runs the core:

        state = core.init(key)
        state = core.on_episode_start(state)                   # observe_first
        action, state = core.select_action(params, obs, state)
        extras = core.get_extras(state)                        # observe -> adder.add(action, ts, extras)
    """

    init: Callable[[Any], State]
    select_action: Callable[[Any, Any, State], Tuple[Any, State]]
    get_extras: Callable[[State], Any]
    on_episode_start: Callable[[State], State] = _keep
