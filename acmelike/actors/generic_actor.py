"""GenericActor: runs an ActorCore over a batch of environments, keeps their states and parameters, feeds an adder.

Acting is always batched: the core's functions take one observation and one state, and the actor runs them vmapped
over B sub-environments in one jitted call per step (`make_batched_step`; `make_batched_act` when no sub-environment
starts or ends an episode, which spares most steps the masks). One environment is a batch of one.
"""

from typing import Optional

import dm_env
import jax
import jax.numpy as jnp
import numpy as np

from acmelike import core
from acmelike.actors.actor_core import ActorCore
from acmelike.adders.base import Adder
from acmelike.variables import VariableClient

_FIRST, _MID, _LAST = (np.int8(step_type) for step_type in dm_env.StepType)
# One environment's flags, as the batched step takes them: a new episode starts, or none does.
_STARTING, _GOING_ON = np.ones(1, bool), np.zeros(1, bool)


def _select(mask, if_true, if_false):
    """Per sub-environment choice between two batched states (mask [B] broadcast over each leaf's trailing axes)."""

    def choose(a, b):
        return jnp.where(jnp.reshape(mask, mask.shape + (1,) * (a.ndim - 1)), a, b)

    return jax.tree_util.tree_map(choose, if_true, if_false)


def make_batched_act(actor_core: ActorCore):
    """`act(params, observations [B, ...], state [B]) -> (actions, state, extras)`: the core's `select_action`
    vmapped over B with the same parameters, and `get_extras` of each new state (one transfer per step). The step
    of `make_batched_step` when no sub-environment starts or finishes an episode."""
    select_action = jax.vmap(actor_core.select_action, in_axes=(None, 0, 0))
    get_extras = jax.vmap(actor_core.get_extras)

    def act(params, observations, state):
        actions, state = select_action(params, observations, state)
        return actions, state, get_extras(state)

    return act


def make_batched_step(actor_core: ActorCore):
    """`step(params, observations [B, ...], state [B], starting [B], finished [B]) -> (actions, state, extras)`.

    The core's functions take one unbatched observation and state; here they are vmapped over B:
      1. `on_episode_start` for the sub-environments whose timestep is FIRST (a recurrent core resets its memory
         there, an exploration clock keeps running);
      2. `select_action` for all B, with the same parameters;
      3. the sub-environments whose timestep is LAST keep their previous state: a vector environment ignores
         their action (its next step is their reset), so it must not advance their clock or consume their rng;
      4. `get_extras` of each sub-environment's state, returned with the actions (one transfer per step).
    """
    on_episode_start = jax.vmap(actor_core.on_episode_start)
    act = make_batched_act(actor_core)
    get_extras = jax.vmap(actor_core.get_extras)

    def step(params, observations, state, starting, finished):
        state = _select(starting, on_episode_start(state), state)
        actions, new_state, _ = act(params, observations, state)
        new_state = _select(finished, state, new_state)
        return actions, new_state, get_extras(new_state)

    return step


def _to_host(tree):
    """A nest of device arrays as numpy arrays (one array, the common case, without a tree traversal)."""
    if isinstance(tree, jax.Array):
        return np.asarray(tree)
    return jax.tree_util.tree_map(np.asarray, tree)


def _first(tree):
    """Sub-environment 0's values of a batch of one: 0-d arrays where the batch held scalars, as an unbatched
    policy returns them (a multi-agent policy's actions are a dict of arrays; extras may be empty)."""
    if isinstance(tree, np.ndarray):
        return tree[0, ...]
    return jax.tree_util.tree_map(lambda x: x[0, ...], tree)


def sub_environment_keys(random_key, num_envs: Optional[int]) -> jax.Array:
    """The keys of an actor's sub-environment states: `jax.random.split(random_key, B)`; for one environment
    (`num_envs` None) `random_key` itself, so its actions do not depend on its being acted as a batch of one."""
    if num_envs is None:
        return jnp.asarray(random_key)[None]
    return jax.random.split(random_key, num_envs)


class ActorShell(core.Actor):
    """What every actor of B sub-environments stepped together does around its policy: the batch of one for one
    environment, the FIRST/LAST flags of each sub-environment, the adder and the parameter updates. A subclass
    says how the policy runs, in `_act`: `GenericActor` in this process, `acmelike.actors.inference`'s client on
    a server.

    With `num_envs` = B (a vector environment, `acmelike.wrappers.VectorEnvironment`), observations, actions and
    timesteps carry a leading axis [B] and the adder is a `BatchedAdder`; without (`num_envs` None, one
    environment) they carry none, and the actor acts them as a batch of one, so the agent's own adder serves it.
    The loop is `core.Actor`'s either way (`environment_loops.EnvironmentLoop` runs it).
    """

    def __init__(self, *, num_envs: Optional[int], variable_client: Optional[VariableClient], adder):
        if num_envs is not None and num_envs < 1:
            raise ValueError(
                f"{type(self).__name__}: num_envs must be >= 1 (or None for one environment), got {num_envs}."
            )
        self.num_envs = num_envs
        self._variable_client = variable_client
        self._adder = adder
        self._starting = _STARTING if num_envs is None else np.ones(num_envs, bool)
        self._finished = _GOING_ON if num_envs is None else np.zeros(num_envs, bool)
        self._flagged = True  # whether a sub-environment starts or finishes an episode at the next action
        self._extras = None

    def _act(self, observations):
        """(actions [B], extras [B]) as host arrays for batched `observations`, given the flags `self._starting`
        and `self._finished` (see `make_batched_step`) and whether any is set (`self._flagged`)."""
        raise NotImplementedError

    def select_action(self, observation):
        if self.num_envs is not None:
            actions, self._extras = self._act(observation)
            return actions
        if isinstance(observation, np.ndarray):
            batch = observation[None]
        else:  # a nest (a multi-agent observation is a dict of per-agent nests)
            batch = jax.tree_util.tree_map(lambda x: np.asarray(x)[None], observation)
        actions, extras = self._act(batch)
        self._starting, self._flagged = _GOING_ON, False
        self._extras = _first(extras)
        return _first(actions)

    def observe_first(self, timestep: dm_env.TimeStep) -> None:
        if self.num_envs is None:
            self._starting = _STARTING
        else:
            self._starting = np.asarray(timestep.step_type) == _FIRST
            self._finished = np.zeros(self.num_envs, bool)
        self._flagged = True
        if self._adder is not None:
            self._adder.add_first(timestep)

    def observe(self, action, next_timestep: dm_env.TimeStep) -> None:
        if self._adder is not None:
            self._adder.add(action, next_timestep, self._extras)
        if self.num_envs is not None:  # one environment's next episode begins with observe_first
            step_type = np.asarray(next_timestep.step_type)
            self._starting = step_type == _FIRST
            self._finished = step_type == _LAST
            self._flagged = bool(np.any(step_type != _MID))

    def update(self, wait: bool = False) -> None:
        if self._variable_client is not None:
            self._variable_client.update(wait)


class GenericActor(ActorShell, core.Saveable):
    """An `Actor` from an `ActorCore`, acting for B sub-environments in one jitted call per step (see `ActorShell`
    for batched and unbatched values).

        actor = GenericActor(core, random_key, VariableClient(learner, "policy"), adder)   # one environment
        actor.observe_first(timestep)
        action = actor.select_action(timestep.observation)

    Sub-environment i's core state is `actor_core.init(sub_environment_keys(random_key, num_envs)[i])`, kept on
    the device between calls; its episode hook runs before the first action of each of its episodes, and it keeps
    its state in a step whose timestep is LAST (see `make_batched_step`).

    Args:
      actor_core: the pure policy functions.
      random_key: seeds the sub-environments' states.
      variable_client: serves parameters; `update()` is forwarded to it once per step. None for parameter-free
        cores.
      adder: receives each step with the core's extras; None for evaluation actors.
      num_envs: B, for batched values; None for one environment's.
      jit: compile the step (disable only to debug).
    """

    def __init__(
        self,
        actor_core: ActorCore,
        random_key,
        variable_client: Optional[VariableClient],
        adder: Optional[Adder] = None,
        num_envs: Optional[int] = None,
        jit: bool = True,
    ):
        super().__init__(num_envs=num_envs, variable_client=variable_client, adder=adder)
        step, act = make_batched_step(actor_core), make_batched_act(actor_core)
        self._step = jax.jit(step) if jit else step
        self._plain_step = jax.jit(act) if jit else act  # most steps: no episode starts or ends
        self._state = jax.vmap(actor_core.init)(sub_environment_keys(random_key, num_envs))

    @property
    def _params(self):
        return self._variable_client.params if self._variable_client is not None else None

    def _act(self, observations):
        if self._flagged:
            actions, self._state, extras = self._step(
                self._params, observations, self._state, self._starting, self._finished
            )
        else:
            actions, self._state, extras = self._plain_step(self._params, observations, self._state)
        return _to_host(actions), _to_host(extras)

    def save(self):
        """The core states (rng, exploration clock, recurrent state) as host arrays, for checkpoints: [B, ...], or
        one environment's without the batch axis."""
        state = jax.device_get(self._state)
        return state if self.num_envs is not None else jax.tree_util.tree_map(lambda x: x[0], state)

    def restore(self, state) -> None:
        if self.num_envs is None:
            state = jax.tree_util.tree_map(lambda x: np.asarray(x)[None], state)
        self._state = jax.device_put(state)


def make_policy_actor(
    actor_core: ActorCore,
    *,
    random_key,
    variable_source: Optional[core.VariableSource],
    adder: Optional[Adder],
    variable_update_period: int,
    num_envs: Optional[int] = None,
) -> GenericActor:
    """A GenericActor whose parameters are the variable "policy" of `variable_source` (e.g. a learner).

    What builders' `make_actor` usually is. `variable_update_period` counts environment steps: the actor fetches
    every `variable_update_period // B` of its steps (a step of B sub-environments is B environment steps; at
    least every step), asynchronously when the source is a `RemoteVariableSource`. No source means a
    parameter-free core.
    """
    client = None
    if variable_source is not None:
        period = max(1, variable_update_period // (num_envs or 1))
        client = VariableClient(variable_source, "policy", update_period=period)
    return GenericActor(actor_core, random_key, client, adder, num_envs=num_envs)
