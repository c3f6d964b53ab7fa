"""`with_variable_client`: an `ActorCore` that keeps its own copy of the learner's parameters and fetches them every
`variable_update_period` of its steps, as a `VariableClient` does for the other runners' actors.

Under `StepStream` each environment's actor is one such core: its copy and step count live in its actor state, and
the padding row after an episode (no action) takes no step, so an environment fetches at its actions 0, period,
2 * period, ... as a single-process actor does. `TransitionRecorder` keeps one copy for all its environments
instead, since its environments all act every step.

    policy = with_variable_client(policy, period=20, example_params=params)
    stream = StepStream(environment, policy)        # stream.unroll(learner_params, ...) as before
"""

from typing import Any, NamedTuple

import jax
import jax.numpy as jnp

from acmelike.actors.actor_core import ActorCore


class ClientState(NamedTuple):
    policy_state: Any  # the wrapped core's own state
    params: Any  # the actor's copy of the learner's parameters
    steps: jax.Array  # int32 []: actions taken


def with_variable_client(policy: ActorCore, period: int, example_params: Any) -> ActorCore:
    """`policy` acting with a copy of the parameters it is given, taken every `period` actions (at action 0 first);
    `period` 1: `policy` itself. `example_params`: arrays (or shapes) like the learner's parameters."""
    if period < 1:
        raise ValueError(f"with_variable_client: variable_update_period must be >= 1, got {period}.")
    if period == 1:
        return policy

    def init(key):
        copy = jax.tree_util.tree_map(lambda x: jnp.zeros(x.shape, x.dtype), example_params)  # taken at action 0
        return ClientState(policy.init(key), copy, jnp.zeros((), jnp.int32))

    def select_action(learner_params, observation, state: ClientState):
        fetch = state.steps % period == 0
        params = jax.tree_util.tree_map(lambda new, old: jnp.where(fetch, new, old), learner_params, state.params)
        action, policy_state = policy.select_action(params, observation, state.policy_state)
        return action, ClientState(policy_state, params, state.steps + 1)

    return ActorCore(
        init=init,
        select_action=select_action,
        get_extras=lambda state: policy.get_extras(state.policy_state),
        on_episode_start=lambda state: state._replace(policy_state=policy.on_episode_start(state.policy_state)),
    )
