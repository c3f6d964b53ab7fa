"""How the fully jitted streams' actors take the learner's parameters, as a `VariableClient` does for the other
runners' actors: each keeps a copy and takes the learner's at its steps 0, period, 2 * period, ... so an agent's
`variable_update_period` means what it means in the other runners. `TransitionRecorder` keeps one copy for all its
environments (they all act every step); `StepStream` one per environment (its padding rows take no step).

    check_variable_update_period("StepStream", period)
    params = fetch_due(learner_params, copy, steps, period)   # what the actor acts with, and its new copy
"""

from typing import Any

import jax
import jax.numpy as jnp


def check_variable_update_period(owner: str, period: int) -> None:
    """ValueError naming `owner` unless `period` >= 1."""
    if period < 1:
        raise ValueError(f"{owner}: variable_update_period must be >= 1, got {period}.")


def fetch_due(learner_params: Any, copy: Any, steps: jax.Array, period: int) -> Any:
    """The parameters an actor acts with after `steps` of its steps: the learner's where a fetch is due (`steps` a
    multiple of `period`), its `copy` elsewhere."""
    fetch = steps % period == 0
    return jax.tree_util.tree_map(lambda new, old: jnp.where(fetch, new, old), learner_params, copy)
