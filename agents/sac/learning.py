"""The SAC learning step (Haarnoja et al., 2018): twin soft critics, a reparameterised policy, and a temperature
tuned toward a target entropy, each with its own optimiser, in one `TrainingState`."""

import functools
from typing import Callable, Dict, NamedTuple, Optional

import jax
import jax.numpy as jnp
import optax

from acmelike.actors.continuous import squashed_gaussian_sample, to_unit
from acmelike.losses import (
    clipped_double_q_target,
    critic_regression_loss,
    sac_actor_loss,
    sac_temperature_loss,
)
from acmelike.types import ReplaySample, Transition
from agents.sac.config import SACConfig
from agents.sac.networks import SACNetworks

LOSS_KEYS = ("critic_loss", "policy_loss", "alpha_loss")


class TrainingState(NamedTuple):
    policy_params: optax.Params
    critic_params: optax.Params
    target_critic_params: optax.Params
    log_alpha: jax.Array
    policy_opt_state: optax.OptState
    critic_opt_state: optax.OptState
    alpha_opt_state: optax.OptState
    key: jax.Array
    steps: jax.Array


def target_entropy(networks: SACNetworks, config: SACConfig) -> float:
    """The configured target entropy, or -A (Haarnoja et al., 2018b) for A action dimensions."""
    return float(-networks.bounds.size if config.target_entropy is None else config.target_entropy)


def init_training_state(networks: SACNetworks, config: SACConfig, key: jax.Array) -> TrainingState:
    policy_key, critic_key, state_key = jax.random.split(key, 3)
    policy_params = networks.policy.init(policy_key)
    critic_params = networks.critic.init(critic_key)
    log_alpha = jnp.asarray(jnp.log(config.initial_temperature), jnp.float32)
    return TrainingState(
        policy_params=policy_params,
        critic_params=critic_params,
        target_critic_params=critic_params,
        log_alpha=log_alpha,
        policy_opt_state=optax.adam(config.policy_learning_rate).init(policy_params),
        critic_opt_state=optax.adam(config.critic_learning_rate).init(critic_params),
        alpha_opt_state=optax.adam(config.temperature_learning_rate).init(log_alpha),
        key=state_key,
        steps=jnp.zeros((), jnp.int32),
    )


def sample_actions(networks: SACNetworks, policy_params, observations: jax.Array, key: jax.Array):
    """Actions [B, A] from the squashed Gaussian policy at `observations` [B, O], in the unit box, and their
    log-probabilities [B]. Reparameterised: gradients flow through both into `policy_params`."""
    mean, log_std = networks.policy.apply(policy_params, observations)
    return squashed_gaussian_sample(mean, log_std, key)


def critic_loss(critic_params, policy_params, target_critic_params, log_alpha: jax.Array, transitions: Transition,
                key: jax.Array, *, networks: SACNetworks, critic_regulariser: Optional[Callable] = None):
    """The twin critics' loss on n-step transitions [B], with the critics' mean value of the transitions' actions
    and the regulariser's value (zero without one), both metrics.

    The critics regress onto the clipped double-Q soft target r + discount * (min_i Q_target_i(s', a') - alpha log
    pi(a'|s')), a' a fresh action of the current policy at s' (`clipped_double_q_target`; the target is stopped).
    `critic_regulariser(critic_params, policy_params, transitions, key) -> scalar`, if given, is added (continuous
    CQL's conservative penalty), with a key split from `key`. Only `critic_params` take gradients.
    """
    if critic_regulariser is not None:
        key, regulariser_key = jax.random.split(key)
    next_actions, next_log_prob = sample_actions(networks, policy_params, transitions.next_observation, key)
    q_t = networks.critic.apply(target_critic_params, transitions.next_observation, next_actions)
    alpha = jnp.exp(log_alpha)
    target = clipped_double_q_target(
        transitions.reward.astype(jnp.float32),
        transitions.discount.astype(jnp.float32),
        q_t,
        entropy_t=-alpha * next_log_prob,
    )
    q_tm1 = networks.critic.apply(critic_params, transitions.observation, to_unit(transitions.action, networks.bounds))
    loss, regulariser = critic_regression_loss(q_tm1, target), jnp.zeros(())
    if critic_regulariser is not None:
        regulariser = critic_regulariser(critic_params, policy_params, transitions, regulariser_key)
    return loss + regulariser, (jnp.mean(q_tm1), regulariser)


def policy_loss(policy_params, critic_params, alpha: jax.Array, observations: jax.Array, key: jax.Array, *,
                networks: SACNetworks):
    """The policy's loss E[alpha log pi(a|s) - min_i Q_i(s, a)] at states `observations` [B] (`sac_actor_loss`), a
    drawn from the policy, with the log-probabilities [B] for the temperature's step. Gradients flow into
    `policy_params` only."""
    actions, log_prob = sample_actions(networks, policy_params, observations, key)
    q = jnp.min(networks.critic.apply(critic_params, observations, actions), axis=0)
    return sac_actor_loss(q, log_prob, alpha), log_prob


def training_metrics(critic_loss_value: jax.Array, policy_loss_value: jax.Array, alpha_loss: jax.Array,
                     log_alpha: jax.Array, log_prob: jax.Array, mean_q: jax.Array) -> Dict[str, jax.Array]:
    """What one step logs: the three losses (`LOSS_KEYS`), the updated temperature, the policy's entropy
    estimate -E[log pi] and the critics' mean value of the batch's actions."""
    return {
        "critic_loss": critic_loss_value,
        "policy_loss": policy_loss_value,
        "alpha_loss": alpha_loss,
        "alpha": jnp.exp(log_alpha),
        "entropy": -jnp.mean(log_prob),
        "mean_q": mean_q,
    }


def make_update_step(networks: SACNetworks, config: SACConfig, critic_regulariser=None):
    """Returns `update_step(state, sample) -> (state, metrics, extras)` for batches of n-step transitions.

    One step: the critics follow `critic_loss` (the clipped double-Q soft target, computed with the target critics
    and a fresh action from the current policy); then the policy follows `policy_loss` against the updated critics;
    then log alpha follows `sac_temperature_loss` on the same sampled actions; finally the target critics move
    toward the critics by Polyak averaging (rate `tau`). Extras: none.

    `critic_regulariser(critic_params, policy_params, transitions, key) -> scalar`, if given, is added to the
    critics' loss and reported as the metric `critic_regulariser` (continuous CQL's conservative penalty).
    """
    policy_optimizer = optax.adam(config.policy_learning_rate)
    critic_optimizer = optax.adam(config.critic_learning_rate)
    alpha_optimizer = optax.adam(config.temperature_learning_rate)
    entropy_target = target_entropy(networks, config)
    critic_grad = jax.value_and_grad(
        functools.partial(critic_loss, networks=networks, critic_regulariser=critic_regulariser), has_aux=True)
    policy_grad = jax.value_and_grad(functools.partial(policy_loss, networks=networks), has_aux=True)

    def update_step(state: TrainingState, sample: ReplaySample):
        transitions = sample.data
        key, critic_key, policy_key = jax.random.split(state.key, 3)

        (critic_loss_value, (mean_q, regulariser)), critic_grads = critic_grad(
            state.critic_params, state.policy_params, state.target_critic_params, state.log_alpha, transitions,
            critic_key)
        critic_updates, critic_opt_state = critic_optimizer.update(critic_grads, state.critic_opt_state)
        critic_params = optax.apply_updates(state.critic_params, critic_updates)

        alpha = jnp.exp(state.log_alpha)
        (policy_loss_value, log_prob), policy_grads = policy_grad(
            state.policy_params, critic_params, alpha, transitions.observation, policy_key)
        policy_updates, policy_opt_state = policy_optimizer.update(policy_grads, state.policy_opt_state)
        policy_params = optax.apply_updates(state.policy_params, policy_updates)

        alpha_loss, alpha_grad = jax.value_and_grad(sac_temperature_loss)(state.log_alpha, log_prob, entropy_target)
        alpha_update, alpha_opt_state = alpha_optimizer.update(alpha_grad, state.alpha_opt_state)
        log_alpha = optax.apply_updates(state.log_alpha, alpha_update)

        new_state = TrainingState(
            policy_params=policy_params,
            critic_params=critic_params,
            target_critic_params=optax.incremental_update(critic_params, state.target_critic_params, config.tau),
            log_alpha=log_alpha,
            policy_opt_state=policy_opt_state,
            critic_opt_state=critic_opt_state,
            alpha_opt_state=alpha_opt_state,
            key=key,
            steps=state.steps + 1,
        )
        metrics = training_metrics(critic_loss_value, policy_loss_value, alpha_loss, log_alpha, log_prob, mean_q)
        if critic_regulariser is not None:
            metrics["critic_regulariser"] = regulariser
        return new_state, metrics, {}

    return update_step
