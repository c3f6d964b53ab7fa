"""The D4PG learning step (Barth-Maron et al., 2018): a categorical distributional critic trained on n-step
returns, a deterministic policy trained on the gradient of the critic's mean, Polyak-averaged targets."""

from typing import NamedTuple

import jax
import jax.numpy as jnp
import optax

from acmelike.actors.continuous import to_unit
from acmelike.losses import categorical_mean, categorical_td_loss, deterministic_policy_gradient_loss
from acmelike.types import ReplaySample
from agents.d4pg.config import D4PGConfig
from agents.d4pg.networks import D4PGNetworks

LOSS_KEYS = ("critic_loss", "policy_loss")


class TrainingState(NamedTuple):
    policy_params: optax.Params
    target_policy_params: optax.Params
    critic_params: optax.Params
    target_critic_params: optax.Params
    policy_opt_state: optax.OptState
    critic_opt_state: optax.OptState
    steps: jax.Array


def init_training_state(networks: D4PGNetworks, config: D4PGConfig, key: jax.Array) -> TrainingState:
    policy_key, critic_key = jax.random.split(key)
    policy_params = networks.policy.init(policy_key)
    critic_params = networks.critic.init(critic_key)
    return TrainingState(
        policy_params=policy_params,
        target_policy_params=policy_params,
        critic_params=critic_params,
        target_critic_params=critic_params,
        policy_opt_state=optax.adam(config.policy_learning_rate).init(policy_params),
        critic_opt_state=optax.adam(config.critic_learning_rate).init(critic_params),
        steps=jnp.zeros((), jnp.int32),
    )


def make_update_step(networks: D4PGNetworks, config: D4PGConfig):
    """Returns `update_step(state, sample) -> (state, metrics, extras)` for batches of n-step transitions.

    The critic minimises the cross-entropy to the target critic's distribution at (s', mu'(s')), shifted by the
    n-step reward and discount and projected onto the support (`categorical_td_loss`), weighted by prioritized
    replay's importance weights when `priority_exponent > 0`. The policy then follows the deterministic policy
    gradient of the updated critic's mean. `extras["priorities"]`: each item's cross-entropy.
    """
    policy_optimizer = optax.adam(config.policy_learning_rate)
    critic_optimizer = optax.adam(config.critic_learning_rate)
    support = jnp.asarray(networks.support)
    bounds = networks.bounds
    dqda_clipping = config.dqda_clipping or None

    def critic_loss_fn(critic_params, state: TrainingState, sample: ReplaySample):
        transitions = sample.data
        weights = None
        if config.priority_exponent > 0:
            weights = (1.0 / sample.info.probability.astype(jnp.float32)) ** config.importance_sampling_exponent
            weights = weights / jnp.max(weights)
        next_actions = networks.policy.apply(state.target_policy_params, transitions.next_observation)
        logits_t = networks.critic.apply(state.target_critic_params, transitions.next_observation, next_actions)
        logits_tm1 = networks.critic.apply(critic_params, transitions.observation, to_unit(transitions.action, bounds))
        loss, cross_entropy = categorical_td_loss(
            logits_tm1,
            transitions.reward.astype(jnp.float32),
            transitions.discount.astype(jnp.float32),
            logits_t,
            support,
            importance_weights=weights,
        )
        return loss, (cross_entropy, jnp.mean(categorical_mean(logits_tm1, support)))

    def policy_loss_fn(policy_params, critic_params, observations):
        actions = networks.policy.apply(policy_params, observations)
        q = lambda a: jnp.sum(categorical_mean(networks.critic.apply(critic_params, observations, a), support))  # noqa: E731
        return deterministic_policy_gradient_loss(actions, jax.grad(q)(actions), dqda_clipping)

    def update_step(state: TrainingState, sample: ReplaySample):
        (critic_loss, (cross_entropy, mean_q)), critic_grads = jax.value_and_grad(critic_loss_fn, has_aux=True)(
            state.critic_params, state, sample
        )
        critic_updates, critic_opt_state = critic_optimizer.update(critic_grads, state.critic_opt_state)
        critic_params = optax.apply_updates(state.critic_params, critic_updates)

        policy_loss, policy_grads = jax.value_and_grad(policy_loss_fn)(
            state.policy_params, critic_params, sample.data.observation
        )
        policy_updates, policy_opt_state = policy_optimizer.update(policy_grads, state.policy_opt_state)
        policy_params = optax.apply_updates(state.policy_params, policy_updates)

        new_state = TrainingState(
            policy_params=policy_params,
            target_policy_params=optax.incremental_update(policy_params, state.target_policy_params, config.tau),
            critic_params=critic_params,
            target_critic_params=optax.incremental_update(critic_params, state.target_critic_params, config.tau),
            policy_opt_state=policy_opt_state,
            critic_opt_state=critic_opt_state,
            steps=state.steps + 1,
        )
        metrics = {"critic_loss": critic_loss, "policy_loss": policy_loss, "mean_q": mean_q}
        return new_state, metrics, {"priorities": cross_entropy}

    return update_step
