"""BatchedActor: one jitted policy call per vector step for B sub-environments, each with its own core state."""

from typing import Optional

import dm_env
import jax
import jax.numpy as jnp
import numpy as np

from acmelike import core
from acmelike.actors.actor_core import ActorCore
from acmelike.variables import VariableClient

_FIRST, _LAST = np.int8(dm_env.StepType.FIRST), np.int8(dm_env.StepType.LAST)


def _select(mask, if_true, if_false):
    """Per sub-environment choice between two batched states (mask [B] broadcast over each leaf's trailing axes)."""

    def choose(a, b):
        return jnp.where(jnp.reshape(mask, mask.shape + (1,) * (a.ndim - 1)), a, b)

    return jax.tree_util.tree_map(choose, if_true, if_false)


def make_batched_step(actor_core: ActorCore):
    """`step(params, observations [B, ...], state [B], starting [B], finished [B]) -> (actions, state, extras)`.

    The core's functions take one unbatched observation and state; here they are vmapped over B:
      1. `on_episode_start` for the sub-environments whose timestep is FIRST (a recurrent core resets its memory
         there, an exploration clock keeps running);
      2. `select_action` for all B, with the same parameters;
      3. the sub-environments whose timestep is LAST keep their previous state: the vector environment ignores
         their action (its next step is their reset), so it must not advance their clock or consume their rng;
      4. `get_extras` of each sub-environment's state, returned with the actions (one transfer per step).
    """
    on_episode_start = jax.vmap(actor_core.on_episode_start)
    select_action = jax.vmap(actor_core.select_action, in_axes=(None, 0, 0))
    get_extras = jax.vmap(actor_core.get_extras)

    def step(params, observations, state, starting, finished):
        state = _select(starting, on_episode_start(state), state)
        actions, new_state = select_action(params, observations, state)
        new_state = _select(finished, state, new_state)
        return actions, new_state, get_extras(new_state)

    return step


class BatchedActor(core.Actor, core.Saveable):
    """An `Actor` over B sub-environments stepped together (`acmelike.wrappers.VectorEnvironment`).

    Observations, actions and timesteps carry a leading axis [B]; the loop is `core.Actor`'s, with batched values:

        actor.observe_first(timestep)                       # after vector_env.reset(): all FIRST
        actions = actor.select_action(timestep.observation) # one jitted call for the whole batch
        timestep = vector_env.step(actions)
        actor.observe(actions, next_timestep=timestep)      # FIRST/LAST per sub-environment

    Sub-environment i's core state is `actor_core.init(jax.random.split(random_key, B)[i])`, kept on the device
    between calls; its episode hook runs before the first action of each of its episodes.

    Args:
      actor_core: the agent's policy (the same `ActorCore` a `GenericActor` runs).
      random_key: seeds the B states.
      num_envs: B.
      variable_client: serves parameters; `update()` is forwarded once per vector step. None: parameter-free core.
      adder: a `BatchedAdder` (or None, for evaluation).
      jit: compile the batched step (disable only to debug).
    """

    def __init__(
        self,
        actor_core: ActorCore,
        random_key,
        num_envs: int,
        variable_client: Optional[VariableClient],
        adder=None,
        jit: bool = True,
    ):
        if num_envs < 1:
            raise ValueError(f"BatchedActor: num_envs must be >= 1, got {num_envs}.")
        self.num_envs = num_envs
        self._variable_client = variable_client
        self._adder = adder
        step = make_batched_step(actor_core)
        self._step = jax.jit(step) if jit else step
        self._state = jax.vmap(actor_core.init)(jax.random.split(random_key, num_envs))
        self._starting = np.ones(num_envs, bool)
        self._finished = np.zeros(num_envs, bool)
        self._extras = None

    @property
    def _params(self):
        return self._variable_client.params if self._variable_client is not None else None

    def select_action(self, observation):
        actions, self._state, extras = self._step(self._params, observation, self._state, self._starting, self._finished)
        actions, self._extras = jax.device_get((actions, extras))
        return actions

    def observe_first(self, timestep: dm_env.TimeStep) -> None:
        self._starting = np.asarray(timestep.step_type) == _FIRST
        self._finished = np.zeros(self.num_envs, bool)
        if self._adder is not None:
            self._adder.add_first(timestep)

    def observe(self, action, next_timestep: dm_env.TimeStep) -> None:
        if self._adder is not None:
            self._adder.add(action, next_timestep, self._extras)
        step_type = np.asarray(next_timestep.step_type)
        self._starting = step_type == _FIRST
        self._finished = step_type == _LAST

    def update(self, wait: bool = False) -> None:
        if self._variable_client is not None:
            self._variable_client.update(wait)

    def save(self):
        """Every sub-environment's core state ([B, ...]: rng, exploration clock, recurrent state), for checkpoints."""
        return jax.device_get(self._state)

    def restore(self, state) -> None:
        self._state = jax.device_put(state)


def make_batched_policy_actor(
    actor_core: ActorCore,
    *,
    random_key,
    num_envs: int,
    variable_source: Optional[core.VariableSource],
    adder=None,
    variable_update_period: int = 1,
) -> BatchedActor:
    """A BatchedActor whose parameters are the variable "policy" of `variable_source`, fetched every
    `variable_update_period` vector steps (as `make_policy_actor` does for one environment)."""
    client = None
    if variable_source is not None:
        client = VariableClient(variable_source, "policy", update_period=variable_update_period)
    return BatchedActor(actor_core, random_key, num_envs, client, adder)
