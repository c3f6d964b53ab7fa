"""ActorCore: a policy as three pure functions, so actors can be jitted, batched or run on another device."""

import dataclasses
from typing import Any, Callable, Generic, Tuple, TypeVar

State = TypeVar("State")


@dataclasses.dataclass(frozen=True)
class ActorCore(Generic[State]):
    """The pure parts of an actor.

    init(key) -> state                                   the actor's state: rng, step count, recurrent state
    select_action(params, observation, state) -> (action, state)   one unbatched observation in, one action out
    get_extras(state) -> extras                          what the adder stores beside the action (e.g. log-probs)

    A `GenericActor` keeps the state for the whole life of the actor, across episodes.
    """

    init: Callable[[Any], State]
    select_action: Callable[[Any, Any, State], Tuple[Any, State]]
    get_extras: Callable[[State], Any]
