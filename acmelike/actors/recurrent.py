"""Recurrent actor cores: carry an `UnrollableNetwork`'s state between steps and reset it at episode starts."""

from typing import Any, Callable, NamedTuple, Sequence, Tuple

import jax
import jax.numpy as jnp

from acmelike.actors.actor_core import ActorCore
from acmelike.networks.recurrent import UnrollableNetwork

# choose(key, outputs, policy_state) -> (action, choice_extras): picks one action from the network's unbatched
# outputs for one observation; `policy_state` is fixed for the actor's life (e.g. its epsilon).
ChooseFn = Callable[[jax.Array, Any, Any], Tuple[jax.Array, Any]]


class RecurrentActorState(NamedTuple):
    key: jax.Array
    recurrent_state: Any  # the network state the next action is chosen from (no batch axis)
    chose_last_action: Any  # the network state the last action was chosen from: what the adder stores
    policy_state: Any  # the choice rule's own state, fixed for the actor's life
    choice_extras: Any  # what the last choice reported (e.g. the behaviour policy's logits)


def _unbatch(tree):
    return jax.tree_util.tree_map(lambda x: x[0], tree)


def _batch(tree):
    return jax.tree_util.tree_map(lambda x: x[None], tree)


def recurrent_core(
    network: UnrollableNetwork,
    choose: ChooseFn,
    init_policy_state: Callable[[jax.Array], Any] = lambda key: (),
    no_choice_extras: Any = None,
) -> ActorCore:
    """An `ActorCore` stepping `network` once per action and choosing with `choose`.

    `init_policy_state(key)` gives the choice rule's state for the actor's life (each actor draws its own).
    `no_choice_extras` is a dict of zeros shaped like what `choose` reports (e.g. `{"logits": zeros([A])}`): the
    extras before the first action, which also fix the replay signature. None: `choose` reports nothing.

    The network state is reset to `network.initial_state` by `on_episode_start`. Extras:
    `{"core_state": the state that chose the action, **choice_extras}`; a learner starts its unroll of a stored
    sequence from the first step's `core_state` (R2D2), and IMPALA's `choice_extras` are the behaviour logits.
    """

    def initial_state():
        return _unbatch(network.initial_state(1))

    def init(key):
        key, policy_key = jax.random.split(key)
        state = initial_state()
        return RecurrentActorState(
            key=key,
            recurrent_state=state,
            chose_last_action=state,
            policy_state=init_policy_state(policy_key),
            choice_extras=dict(no_choice_extras or {}),
        )

    def on_episode_start(state: RecurrentActorState) -> RecurrentActorState:
        fresh = initial_state()
        return state._replace(recurrent_state=fresh, chose_last_action=fresh)

    def select_action(params, observation, state: RecurrentActorState):
        key, choose_key = jax.random.split(state.key)
        outputs, next_recurrent = network.apply(params, observation[None], _batch(state.recurrent_state))
        action, choice_extras = choose(choose_key, _unbatch(outputs), state.policy_state)
        return action, RecurrentActorState(
            key=key,
            recurrent_state=_unbatch(next_recurrent),
            chose_last_action=state.recurrent_state,
            policy_state=state.policy_state,
            choice_extras=choice_extras,
        )

    def get_extras(state: RecurrentActorState):
        return {"core_state": state.chose_last_action, **state.choice_extras}

    return ActorCore(init=init, select_action=select_action, get_extras=get_extras, on_episode_start=on_episode_start)


def apex_epsilons(num_epsilons: int, base: float = 0.4, alpha: float = 7.0) -> jax.Array:
    """The Ape-X/R2D2 exploration rates: epsilon_i = base ** (1 + alpha * i / (N - 1)), i = 0..N-1 (Horgan et al.,
    2018; Kapturowski et al., 2019); `[base]` when N = 1."""
    if num_epsilons == 1:
        return jnp.array([base], jnp.float32)
    exponents = 1.0 + alpha * jnp.arange(num_epsilons, dtype=jnp.float32) / (num_epsilons - 1)
    return jnp.power(jnp.float32(base), exponents)


def recurrent_epsilon_greedy_core(network: UnrollableNetwork, epsilons: Sequence[float]) -> ActorCore:
    """Epsilon-greedy over the Q-values `network` outputs ([A] per observation). Each actor draws its epsilon once,
    from `epsilons`, with its own key (R2D2's per-actor exploration). Extras: `{"core_state"}`."""
    epsilons = jnp.asarray(epsilons, jnp.float32)

    def init_policy_state(key):
        return jax.random.choice(key, epsilons)

    def choose(key, q_values, epsilon):
        num_actions = q_values.shape[-1]
        explore_u, action_u = jax.random.uniform(key, (2,))
        random_action = jnp.minimum((action_u * num_actions).astype(jnp.int32), num_actions - 1)
        return jnp.where(explore_u < epsilon, random_action, jnp.argmax(q_values).astype(jnp.int32)), {}

    return recurrent_core(network, choose, init_policy_state)


def recurrent_categorical_core(network: UnrollableNetwork, num_actions: int, greedy: bool = False) -> ActorCore:
    """Samples from (or, if `greedy`, takes the mode of) the categorical policy whose logits are the first output
    of `network` (`(logits [A], ...)` per observation). Extras: `{"core_state", "logits"}`, the behaviour policy
    IMPALA's V-trace corrects for."""

    def choose(key, outputs, _):
        logits = outputs[0]
        action = jnp.argmax(logits) if greedy else jax.random.categorical(key, logits)
        return action.astype(jnp.int32), {"logits": logits}

    return recurrent_core(network, choose, no_choice_extras={"logits": jnp.zeros((num_actions,), jnp.float32)})
