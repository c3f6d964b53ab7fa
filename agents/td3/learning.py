"""The TD3 learning step (Fujimoto et al., 2018): twin critics with clipped double-Q targets, target policy
smoothing, and policy and target updates delayed to every `policy_delay`-th step."""

from typing import NamedTuple, Optional

import jax
import jax.numpy as jnp
import optax

from acmelike.actors.continuous import to_unit
from acmelike.learners.periodic import is_due
from acmelike.losses import clipped_double_q_target, critic_regression_loss, deterministic_policy_gradient_loss
from acmelike.types import ReplaySample
from agents.td3.config import TD3Config
from agents.td3.networks import TD3Networks

LOSS_KEYS = ("critic_loss", "policy_loss")


class TrainingState(NamedTuple):
    policy_params: optax.Params
    target_policy_params: optax.Params
    critic_params: optax.Params
    target_critic_params: optax.Params
    policy_opt_state: optax.OptState
    critic_opt_state: optax.OptState
    key: jax.Array
    steps: jax.Array


def init_training_state(networks: TD3Networks, config: TD3Config, key: jax.Array) -> TrainingState:
    policy_key, critic_key, state_key = jax.random.split(key, 3)
    policy_params = networks.policy.init(policy_key)
    critic_params = networks.critic.init(critic_key)
    return TrainingState(
        policy_params=policy_params,
        target_policy_params=policy_params,
        critic_params=critic_params,
        target_critic_params=critic_params,
        policy_opt_state=optax.adam(config.policy_learning_rate).init(policy_params),
        critic_opt_state=optax.adam(config.critic_learning_rate).init(critic_params),
        key=state_key,
        steps=jnp.zeros((), jnp.int32),
    )


def smoothed_target_actions(
    target_actions: jax.Array, key: jax.Array, noise_std: float, noise_clip: float
) -> jax.Array:
    """Target policy smoothing: mu'(s') + clip(N(0, noise_std^2), -noise_clip, noise_clip), kept in [-1, 1]."""
    noise = jnp.clip(noise_std * jax.random.normal(key, target_actions.shape), -noise_clip, noise_clip)
    return jnp.clip(target_actions + noise, -1.0, 1.0)


def make_update_step(networks: TD3Networks, config: TD3Config, seeds_axis: Optional[str] = None):
    """Returns `update_step(state, sample) -> (state, metrics, extras)` for batches of n-step transitions.

    Every step updates the critics toward r + discount * min_i Q'_i(s', smoothed mu'(s')). Every
    `policy_delay`-th step (steps counted from 1) also moves the policy along the deterministic policy gradient
    of the first critic, and the target policy and critics toward theirs by Polyak averaging; other steps leave
    policy, its optimiser state and every target untouched (`lax.cond`, so they cost nothing). `policy_loss` is
    the loss of the last policy update. Extras: none.

    `seeds_axis`: the name of a vmapped axis along which every state's `steps` is the same (the fully jitted
    form's seeds, which all learn in the same iterations). The decision is then reduced across it, so it stays a
    branch: decided per seed, `lax.cond` under vmap becomes a select that computes the policy update every step
    (and copies the policy, its optimiser state and both targets through it) to keep it one step in
    `policy_delay` (`acmelike.learners.periodic`). None (one learner): decided on `steps` as it is.
    """
    policy_optimizer = optax.adam(config.policy_learning_rate)
    critic_optimizer = optax.adam(config.critic_learning_rate)
    bounds = networks.bounds

    def critic_loss_fn(critic_params, state: TrainingState, transitions, key):
        next_actions = smoothed_target_actions(
            networks.policy.apply(state.target_policy_params, transitions.next_observation),
            key, config.target_noise, config.target_noise_clip,
        )
        q_t = networks.critic.apply(state.target_critic_params, transitions.next_observation, next_actions)
        target = clipped_double_q_target(
            transitions.reward.astype(jnp.float32), transitions.discount.astype(jnp.float32), q_t
        )
        q_tm1 = networks.critic.apply(critic_params, transitions.observation, to_unit(transitions.action, bounds))
        return critic_regression_loss(q_tm1, target), jnp.mean(q_tm1)

    def policy_loss_fn(policy_params, critic_params, observations):
        actions = networks.policy.apply(policy_params, observations)
        dq_da = jax.grad(lambda a: jnp.sum(networks.critic.apply(critic_params, observations, a)[0]))(actions)
        return deterministic_policy_gradient_loss(actions, dq_da)

    def update_step(state: TrainingState, sample: ReplaySample):
        transitions = sample.data
        key, critic_key = jax.random.split(state.key)
        (critic_loss, mean_q), critic_grads = jax.value_and_grad(critic_loss_fn, has_aux=True)(
            state.critic_params, state, transitions, critic_key
        )
        critic_updates, critic_opt_state = critic_optimizer.update(critic_grads, state.critic_opt_state)
        critic_params = optax.apply_updates(state.critic_params, critic_updates)
        steps = state.steps + 1

        def update_policy_and_targets(_):
            policy_loss, policy_grads = jax.value_and_grad(policy_loss_fn)(
                state.policy_params, critic_params, transitions.observation
            )
            updates, policy_opt_state = policy_optimizer.update(policy_grads, state.policy_opt_state)
            policy_params = optax.apply_updates(state.policy_params, updates)
            return (
                policy_params,
                policy_opt_state,
                optax.incremental_update(policy_params, state.target_policy_params, config.tau),
                optax.incremental_update(critic_params, state.target_critic_params, config.tau),
                policy_loss,
            )

        def keep(_):
            return (state.policy_params, state.policy_opt_state, state.target_policy_params,
                    state.target_critic_params, jnp.zeros((), jnp.float32))

        policy_params, policy_opt_state, target_policy_params, target_critic_params, policy_loss = jax.lax.cond(
            is_due(steps, config.policy_delay, seeds_axis), update_policy_and_targets, keep, None
        )
        new_state = TrainingState(
            policy_params=policy_params,
            target_policy_params=target_policy_params,
            critic_params=critic_params,
            target_critic_params=target_critic_params,
            policy_opt_state=policy_opt_state,
            critic_opt_state=critic_opt_state,
            key=key,
            steps=steps,
        )
        metrics = {"critic_loss": critic_loss, "policy_loss": policy_loss, "mean_q": mean_q}
        return new_state, metrics, {}

    return update_step
