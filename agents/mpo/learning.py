"""The MPO learning step (Abdolmaleki et al., 2018): an expected-SARSA critic under the target policy, and a
policy improved by an E-step over sampled actions and a KL-constrained M-step, with learned dual variables; policy,
critic and dual variables each have their own optimiser, all in one `TrainingState`. With a categorical critic it is
DMPO (Acme's distributional MPO): the critic learns the return's distribution, and the policy its mean."""

from typing import NamedTuple

import jax
import jax.numpy as jnp
import optax

from acmelike.actors.continuous import to_unit
from acmelike.losses import (
    MPODualParams,
    categorical_mean,
    categorical_td_loss,
    critic_regression_loss,
    init_dual_params,
    mixture_logits,
    mpo_loss,
    project_dual_params,
)
from acmelike.types import ReplaySample
from agents.mpo.config import MPOConfig
from agents.mpo.networks import MPONetworks

LOSS_KEYS = ("critic_loss", "policy_loss", "dual_loss")


class TrainingState(NamedTuple):
    policy_params: optax.Params
    critic_params: optax.Params
    target_policy_params: optax.Params
    target_critic_params: optax.Params
    dual_params: MPODualParams
    policy_opt_state: optax.OptState
    critic_opt_state: optax.OptState
    dual_opt_state: optax.OptState
    key: jax.Array
    steps: jax.Array


def _optimizers(config: MPOConfig):
    clip = optax.clip_by_global_norm(config.max_gradient_norm)
    return (
        optax.chain(clip, optax.adam(config.policy_learning_rate)),
        optax.chain(clip, optax.adam(config.critic_learning_rate)),
        optax.adam(config.dual_learning_rate),
    )


def init_training_state(networks: MPONetworks, config: MPOConfig, key: jax.Array) -> TrainingState:
    policy_key, critic_key, state_key = jax.random.split(key, 3)
    policy_params = networks.policy.init(policy_key)
    critic_params = networks.critic.init(critic_key)
    dual_params = init_dual_params(
        networks.bounds.size,
        init_log_temperature=config.init_log_temperature,
        init_log_alpha_mean=config.init_log_alpha_mean,
        init_log_alpha_stddev=config.init_log_alpha_stddev,
        per_dimension=config.per_dimension_constraints,
    )
    policy_optimizer, critic_optimizer, dual_optimizer = _optimizers(config)
    return TrainingState(
        policy_params=policy_params,
        critic_params=critic_params,
        target_policy_params=policy_params,
        target_critic_params=critic_params,
        dual_params=dual_params,
        policy_opt_state=policy_optimizer.init(policy_params),
        critic_opt_state=critic_optimizer.init(critic_params),
        dual_opt_state=dual_optimizer.init(dual_params),
        key=state_key,
        steps=jnp.zeros((), jnp.int32),
    )


def make_update_step(networks: MPONetworks, config: MPOConfig):
    """Returns `update_step(state, sample) -> (state, metrics, extras)` for batches of n-step transitions.

    One step, from the same state for critic and policy:
    - critic: Q(s, a) regresses onto r + discount * mean_j Q_target(s', a'_j), with `num_samples` actions a'_j
      drawn from the target policy at s' (expected SARSA under the target policy; Acme's `policy_eval_stochastic`).
      A categorical critic (DMPO) instead minimises the cross-entropy to the equal mixture of the target critic's
      distributions at the a'_j, shifted by r + discount * z and projected onto the support;
    - policy and duals: `num_samples` actions a_i drawn from the target policy at s, valued by the target critic,
      give the E-step weights; `acmelike.losses.mpo_loss` fits the policy to them under the decoupled KL
      constraints and gives the temperature's and the multipliers' dual losses. The dual parameters are clipped
      from below after their step (`project_dual_params`);
    - targets: the target policy and critic move toward the online ones by Polyak averaging (rate `tau`).
    Sampled actions are in the unit box, unclipped for the policy's likelihood; the critic clips them. The E-step
    values actions by the critic's mean (a categorical critic's expectation). Extras: none.
    """
    policy_optimizer, critic_optimizer, dual_optimizer = _optimizers(config)
    bounds = networks.bounds
    num_samples = config.num_samples
    support = None if networks.support is None else jnp.asarray(networks.support)

    def sample_actions(policy_params, observations, key):
        mean, stddev = networks.policy.apply(policy_params, observations)
        noise = jax.random.normal(key, (num_samples,) + mean.shape, mean.dtype)
        return mean[None] + stddev[None] * noise, mean, stddev  # [N, B, A], [B, A], [B, A]

    def critic_of_samples(critic_params, observations, actions):
        """The critic's outputs for N actions per state (`actions` [N, B, A]): [N, B] values or [N, B, K] logits."""
        return jax.vmap(lambda a: networks.critic.apply(critic_params, observations, a))(actions)

    def mean_value(critic_outputs):
        return critic_outputs if support is None else categorical_mean(critic_outputs, support)

    def critic_loss_fn(critic_params, state: TrainingState, transitions, key):
        next_actions, _, _ = sample_actions(state.target_policy_params, transitions.next_observation, key)
        outputs_t = critic_of_samples(state.target_critic_params, transitions.next_observation, next_actions)
        reward = transitions.reward.astype(jnp.float32)
        discount = transitions.discount.astype(jnp.float32)
        outputs_tm1 = networks.critic.apply(critic_params, transitions.observation,
                                            to_unit(transitions.action, bounds))
        if support is not None:
            loss, _ = categorical_td_loss(outputs_tm1, reward, discount, mixture_logits(outputs_t), support)
            return loss, jnp.mean(mean_value(outputs_tm1))
        target = jax.lax.stop_gradient(reward + discount * jnp.mean(outputs_t, 0))
        return critic_regression_loss(outputs_tm1[None], target), jnp.mean(outputs_tm1)

    def policy_loss_fn(policy_params, dual_params, state: TrainingState, observations, key):
        actions, target_mean, target_stddev = sample_actions(state.target_policy_params, observations, key)
        q_values = mean_value(critic_of_samples(state.target_critic_params, observations, actions))
        online_mean, online_stddev = networks.policy.apply(policy_params, observations)
        output = mpo_loss(
            dual_params, online_mean, online_stddev, target_mean, target_stddev,
            jax.lax.stop_gradient(actions), jax.lax.stop_gradient(q_values),
            epsilon=config.epsilon, epsilon_mean=config.epsilon_mean, epsilon_stddev=config.epsilon_stddev,
        )
        return output.loss, (output, online_stddev)

    def update_step(state: TrainingState, sample: ReplaySample):
        transitions = sample.data
        key, critic_key, policy_key = jax.random.split(state.key, 3)

        (critic_loss, mean_q), critic_grads = jax.value_and_grad(critic_loss_fn, has_aux=True)(
            state.critic_params, state, transitions, critic_key
        )
        critic_updates, critic_opt_state = critic_optimizer.update(critic_grads, state.critic_opt_state)
        critic_params = optax.apply_updates(state.critic_params, critic_updates)

        (_, (output, stddev)), (policy_grads, dual_grads) = jax.value_and_grad(
            policy_loss_fn, argnums=(0, 1), has_aux=True
        )(state.policy_params, state.dual_params, state, transitions.observation, policy_key)
        policy_updates, policy_opt_state = policy_optimizer.update(policy_grads, state.policy_opt_state)
        policy_params = optax.apply_updates(state.policy_params, policy_updates)
        dual_updates, dual_opt_state = dual_optimizer.update(dual_grads, state.dual_opt_state)
        dual_params = project_dual_params(optax.apply_updates(state.dual_params, dual_updates))

        new_state = TrainingState(
            policy_params=policy_params,
            critic_params=critic_params,
            target_policy_params=optax.incremental_update(policy_params, state.target_policy_params, config.tau),
            target_critic_params=optax.incremental_update(critic_params, state.target_critic_params, config.tau),
            dual_params=dual_params,
            policy_opt_state=policy_opt_state,
            critic_opt_state=critic_opt_state,
            dual_opt_state=dual_opt_state,
            key=key,
            steps=state.steps + 1,
        )
        metrics = {
            "critic_loss": critic_loss,
            "policy_loss": output.policy_loss + output.kl_penalty,
            "dual_loss": output.dual_loss,
            "temperature": output.temperature,
            "alpha_mean": jnp.mean(output.alpha_mean),
            "alpha_stddev": jnp.mean(output.alpha_stddev),
            "kl_nonparametric": output.kl_nonparametric,
            "kl_mean": jnp.mean(output.kl_mean),
            "kl_stddev": jnp.mean(output.kl_stddev),
            "stddev": jnp.mean(stddev),
            "mean_q": mean_q,
        }
        return new_state, metrics, {}

    return update_step
