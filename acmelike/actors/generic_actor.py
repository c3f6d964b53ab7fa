"""GenericActor: runs an ActorCore, keeps its state and parameters, and feeds an adder."""

from typing import Optional

import dm_env
import jax
import numpy as np

from acmelike import core
from acmelike.actors.actor_core import ActorCore
from acmelike.adders.base import Adder
from acmelike.variables import VariableClient


class GenericActor(core.Actor, core.Saveable):
    """An `Actor` from an `ActorCore`: keeps the core's state for the actor's life, runs its episode hook in
    `observe_first`, and hands the adder the extras of the state that chose each action.

        actor = GenericActor(core, random_key, VariableClient(learner, "policy"), adder)
        actor.observe_first(timestep)
        action = actor.select_action(timestep.observation)

    Args:
      actor_core: the pure policy functions.
      random_key: seeds the core's state.
      variable_client: serves parameters; `update()` is forwarded to it. None for parameter-free cores.
      adder: receives each step with the core's extras; None for evaluation actors.
      jit: compile `select_action` (disable only to debug).
    """

    def __init__(
        self,
        actor_core: ActorCore,
        random_key,
        variable_client: Optional[VariableClient],
        adder: Optional[Adder] = None,
        jit: bool = True,
    ):
        self._core = actor_core
        self._variable_client = variable_client
        self._adder = adder
        self._select_action = jax.jit(actor_core.select_action) if jit else actor_core.select_action
        self._on_episode_start = jax.jit(actor_core.on_episode_start) if jit else actor_core.on_episode_start
        self._get_extras = actor_core.get_extras
        self._state = actor_core.init(random_key)

    @property
    def _params(self):
        return self._variable_client.params if self._variable_client is not None else None

    def select_action(self, observation):
        action, self._state = self._select_action(self._params, observation, self._state)
        return jax.tree_util.tree_map(np.asarray, action)  # a multi-agent policy's action is a dict of arrays

    def observe_first(self, timestep: dm_env.TimeStep) -> None:
        self._state = self._on_episode_start(self._state)
        if self._adder is not None:
            self._adder.add_first(timestep)

    def observe(self, action, next_timestep: dm_env.TimeStep) -> None:
        if self._adder is not None:
            extras = jax.tree_util.tree_map(np.asarray, self._get_extras(self._state))
            self._adder.add(action, next_timestep, extras)

    def update(self, wait: bool = False) -> None:
        if self._variable_client is not None:
            self._variable_client.update(wait)

    def save(self):
        """The core's state (rng, exploration clock, recurrent state) as host arrays, for checkpoints."""
        return jax.device_get(self._state)

    def restore(self, state) -> None:
        self._state = jax.device_put(state)


def make_policy_actor(
    actor_core: ActorCore,
    *,
    random_key,
    variable_source: Optional[core.VariableSource],
    adder: Optional[Adder],
    variable_update_period: int,
) -> GenericActor:
    """A GenericActor whose parameters are the variable "policy" of `variable_source` (e.g. a learner).

    What builders' `make_actor` usually is: fetches every `variable_update_period` steps, asynchronously when the
    source is a `RemoteVariableSource`; no source means a parameter-free core.
    """
    client = None
    if variable_source is not None:
        client = VariableClient(variable_source, "policy", update_period=variable_update_period)
    return GenericActor(actor_core, random_key, client, adder)
