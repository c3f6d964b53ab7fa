"""Actors: an `ActorCore` (pure policy functions) run by a `GenericActor` (the stateful shell)."""

from acmelike.actors.actor_core import ActorCore
from acmelike.actors.batched import BatchedActor, make_batched_policy_actor
from acmelike.actors.continuous import (
    gaussian_noise_core,
    squashed_gaussian_core,
    squashed_gaussian_sample,
    to_bounds,
    to_unit,
    uniform_warmup_core,
)
from acmelike.actors.cores import categorical_policy_core, epsilon_greedy_core
from acmelike.actors.generic_actor import GenericActor, make_policy_actor
from acmelike.actors.recurrent import (
    apex_epsilons,
    recurrent_categorical_core,
    recurrent_core,
    recurrent_epsilon_greedy_core,
)

__all__ = [
    "ActorCore",
    "BatchedActor",
    "GenericActor",
    "apex_epsilons",
    "categorical_policy_core",
    "epsilon_greedy_core",
    "gaussian_noise_core",
    "make_batched_policy_actor",
    "make_policy_actor",
    "recurrent_categorical_core",
    "recurrent_core",
    "recurrent_epsilon_greedy_core",
    "squashed_gaussian_core",
    "squashed_gaussian_sample",
    "to_bounds",
    "to_unit",
    "uniform_warmup_core",
]
