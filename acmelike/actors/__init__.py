"""Actors: an `ActorCore` (pure policy functions) run by a `GenericActor` (the stateful shell, acting for a batch
of environments: one environment is a batch of one)."""

from acmelike.actors.actor_core import ActorCore
from acmelike.actors.continuous import (
    gaussian_noise_core,
    squashed_gaussian_core,
    squashed_gaussian_sample,
    to_bounds,
    to_unit,
    uniform_warmup_core,
)
from acmelike.actors.cores import categorical_policy_core, epsilon_greedy_core
from acmelike.actors.generic_actor import (
    ActorShell,
    GenericActor,
    make_batched_step,
    make_policy_actor,
    sub_environment_keys,
)
from acmelike.actors.recurrent import (
    apex_epsilons,
    recurrent_categorical_core,
    recurrent_core,
    recurrent_epsilon_greedy_core,
)

__all__ = [
    "ActorCore",
    "ActorShell",
    "GenericActor",
    "apex_epsilons",
    "categorical_policy_core",
    "epsilon_greedy_core",
    "gaussian_noise_core",
    "make_batched_step",
    "make_policy_actor",
    "recurrent_categorical_core",
    "recurrent_core",
    "recurrent_epsilon_greedy_core",
    "squashed_gaussian_core",
    "squashed_gaussian_sample",
    "sub_environment_keys",
    "to_bounds",
    "to_unit",
    "uniform_warmup_core",
]
