"""Actors: an `ActorCore` (pure policy functions) run by a `GenericActor` (the stateful shell)."""

from acmelike.actors.actor_core import ActorCore
from acmelike.actors.batched import BatchedActor, make_batched_policy_actor
from acmelike.actors.cores import categorical_policy_core, epsilon_greedy_core
from acmelike.actors.generic_actor import GenericActor, make_policy_actor

__all__ = ["ActorCore", "GenericActor", "categorical_policy_core", "epsilon_greedy_core", "make_policy_actor"]
__all__ += ["BatchedActor", "make_batched_policy_actor"]
