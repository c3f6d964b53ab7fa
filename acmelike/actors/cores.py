"""Actor cores for discrete actions: epsilon-greedy over Q-values, and sampling from a categorical policy."""

from typing import Callable, NamedTuple

import jax
import jax.numpy as jnp

from acmelike.actors.actor_core import ActorCore


class EpsilonGreedyState(NamedTuple):
    key: jax.Array
    steps: jax.Array  # actions selected so far: the exploration schedule's clock


def epsilon_greedy_core(
    q_values_fn: Callable[[object, jax.Array], jax.Array], epsilon_schedule: Callable[[jax.Array], jax.Array]
) -> ActorCore:
    """Acts greedily on `q_values_fn(params, [1, ...]) -> [1, A]` with probability 1 - epsilon.

    `epsilon_schedule(steps)` is evaluated inside the jitted step (e.g. an optax schedule), so exploration decays
    with this actor's own step count. Stores no extras.
    """

    def init(key):
        return EpsilonGreedyState(key=key, steps=jnp.zeros((), jnp.int32))

    def select_action(params, observation, state):
        key, sample_key = jax.random.split(state.key)
        q_values = q_values_fn(params, observation[None])[0]
        num_actions = q_values.shape[-1]
        # One draw serves both choices (explore?, which action?): actors run this per step, and on CPU every
        # extra random op costs more than the tiny MLP.
        explore_u, action_u = jax.random.uniform(sample_key, (2,))
        random_action = jnp.minimum((action_u * num_actions).astype(jnp.int32), num_actions - 1)
        action = jnp.where(explore_u < epsilon_schedule(state.steps), random_action, jnp.argmax(q_values))
        return action, EpsilonGreedyState(key=key, steps=state.steps + 1)

    return ActorCore(init=init, select_action=select_action, get_extras=lambda state: ())


class CategoricalState(NamedTuple):
    key: jax.Array
    log_prob: jax.Array  # log-probability of the last action, under the policy that chose it


def categorical_policy_core(logits_fn: Callable[[object, jax.Array], jax.Array], greedy: bool = False) -> ActorCore:
    """Samples from (or, if `greedy`, takes the mode of) a categorical policy `logits_fn(params, [1, ...]) -> [1, A]`.

    Extras: `{"log_prob": log pi(a|s)}` of the chosen action, which PPO needs for its importance ratios.
    """

    def init(key):
        return CategoricalState(key=key, log_prob=jnp.zeros((), jnp.float32))

    def select_action(params, observation, state):
        key, sample_key = jax.random.split(state.key)
        logits = logits_fn(params, observation[None])[0]
        if greedy:
            action = jnp.argmax(logits)
        else:
            action = jax.random.categorical(sample_key, logits)
        log_prob = jax.nn.log_softmax(logits)[action]
        return action, CategoricalState(key=key, log_prob=log_prob)

    return ActorCore(init=init, select_action=select_action, get_extras=lambda state: {"log_prob": state.log_prob})
