"""The MPO learning step (Abdolmaleki et al., 2018): an expected-SARSA critic under the target policy, and a
policy improved by an E-step over sampled actions and a KL-constrained M-step, with learned dual variables; policy,
critic and dual variables each have their own optimiser, all in one `TrainingState`. With a categorical critic it is
DMPO (Acme's distributional MPO): the critic learns the return's distribution, and the policy its mean."""

import functools
from typing import Dict, NamedTuple, Optional

import jax
import jax.numpy as jnp
import optax

from acmelike.actors.continuous import to_unit
from acmelike.losses import (
    MPODualParams,
    MPOLossOutput,
    categorical_mean,
    categorical_td_loss,
    critic_regression_loss,
    init_dual_params,
    mixture_logits,
    mpo_loss,
    project_dual_params,
)
from acmelike.types import ReplaySample, Transition
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


def sample_actions(networks: MPONetworks, policy_params, observations: jax.Array, num_samples: int, key: jax.Array):
    """`num_samples` actions per state from the Gaussian policy at `observations` [B, O].

    The actions are in the unit box and unclipped: the policy's likelihood needs them as drawn, and the critic clips
    them. Returns actions [N, B, A] and the policy's mean and stddev, [B, A] each.
    """
    mean, stddev = networks.policy.apply(policy_params, observations)
    noise = jax.random.normal(key, (num_samples,) + mean.shape, mean.dtype)
    return mean[None] + stddev[None] * noise, mean, stddev


def critic_of_samples(networks: MPONetworks, critic_params, observations: jax.Array, actions: jax.Array) -> jax.Array:
    """The critic's outputs for N actions per state (`actions` [N, B, A]): [N, B] values or [N, B, K] logits."""
    return jax.vmap(lambda a: networks.critic.apply(critic_params, observations, a))(actions)


def mean_value(critic_outputs: jax.Array, support: Optional[jax.Array]) -> jax.Array:
    """The values of the critic's outputs: a scalar critic's own, a categorical critic's mean over `support` [K]
    (its logits [..., K] give values [...])."""
    return critic_outputs if support is None else categorical_mean(critic_outputs, support)


def critic_loss(critic_params, target_policy_params, target_critic_params, transitions: Transition, key: jax.Array,
                *, networks: MPONetworks, num_samples: int, support: Optional[jax.Array]):
    """The critic's loss on n-step transitions [B], by expected SARSA under the target policy (Acme's
    `policy_eval_stochastic`), and the mean value of the transitions' actions (a metric).

    Q(s, a) regresses onto r + discount * mean_j Q_target(s', a'_j), the a'_j `num_samples` actions drawn from the
    target policy at s'. A categorical critic (`support` given, DMPO) instead minimises the cross-entropy to the equal
    mixture of the target critic's distributions at the a'_j, shifted by r + discount * z and projected onto the
    support. Only `critic_params` take gradients: the target is stopped.
    """
    next_actions, _, _ = sample_actions(networks, target_policy_params, transitions.next_observation, num_samples, key)
    outputs_t = critic_of_samples(networks, target_critic_params, transitions.next_observation, next_actions)
    reward = transitions.reward.astype(jnp.float32)
    discount = transitions.discount.astype(jnp.float32)
    outputs_tm1 = networks.critic.apply(critic_params, transitions.observation,
                                        to_unit(transitions.action, networks.bounds))
    if support is not None:
        loss, _ = categorical_td_loss(outputs_tm1, reward, discount, mixture_logits(outputs_t), support)
        return loss, jnp.mean(mean_value(outputs_tm1, support))
    target = jax.lax.stop_gradient(reward + discount * jnp.mean(outputs_t, 0))
    return critic_regression_loss(outputs_tm1[None], target), jnp.mean(outputs_tm1)


def policy_loss(policy_params, dual_params: MPODualParams, target_policy_params, target_critic_params,
                observations: jax.Array, key: jax.Array, *, networks: MPONetworks, config: MPOConfig,
                support: Optional[jax.Array]):
    """The policy's and the dual variables' loss at states `observations` [B], with `mpo_loss`'s output and the
    online policy's stddev [B, A] (for the metrics).

    E-step: `num_samples` actions drawn from the target policy, valued by the target critic's mean, give the
    weights. M-step: `mpo_loss` fits the online policy to them under the decoupled KL constraints (`epsilon_mean`,
    `epsilon_stddev`) and gives the temperature's (`epsilon`) and the multipliers' dual losses. Gradients flow into
    `policy_params` and `dual_params` only: the sampled actions and their values are stopped.
    """
    actions, target_mean, target_stddev = sample_actions(networks, target_policy_params, observations,
                                                         config.num_samples, key)
    q_values = mean_value(critic_of_samples(networks, target_critic_params, observations, actions), support)
    online_mean, online_stddev = networks.policy.apply(policy_params, observations)
    output = mpo_loss(
        dual_params, online_mean, online_stddev, target_mean, target_stddev,
        jax.lax.stop_gradient(actions), jax.lax.stop_gradient(q_values),
        epsilon=config.epsilon, epsilon_mean=config.epsilon_mean, epsilon_stddev=config.epsilon_stddev,
    )
    return output.loss, (output, online_stddev)


def training_metrics(critic_loss_value: jax.Array, mean_q: jax.Array, output: MPOLossOutput,
                     stddev: jax.Array) -> Dict[str, jax.Array]:
    """What one step logs: the three losses (`LOSS_KEYS`; the policy's with its KL penalty), the dual variables,
    the KLs (multipliers and KLs averaged over action dimensions), the policy's mean stddev and the critic's mean
    value of the batch's actions."""
    return {
        "critic_loss": critic_loss_value,
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


def make_update_step(networks: MPONetworks, config: MPOConfig):
    """Returns `update_step(state, sample) -> (state, metrics, extras)` for batches of n-step transitions.

    One step, from the same state for critic and policy:
    - critic: `critic_loss` (expected SARSA under the target policy; DMPO's cross-entropy with a categorical
      critic);
    - policy and duals: `policy_loss` (the E-step's weights, then `acmelike.losses.mpo_loss`'s M-step under the
      decoupled KL constraints). The dual parameters are clipped from below after their step
      (`project_dual_params`);
    - targets: the target policy and critic move toward the online ones by Polyak averaging (rate `tau`).
    Sampled actions are in the unit box, unclipped for the policy's likelihood; the critic clips them. The E-step
    values actions by the critic's mean (a categorical critic's expectation). Extras: none.
    """
    policy_optimizer, critic_optimizer, dual_optimizer = _optimizers(config)
    support = None if networks.support is None else jnp.asarray(networks.support)
    critic_grad = jax.value_and_grad(
        functools.partial(critic_loss, networks=networks, num_samples=config.num_samples, support=support),
        has_aux=True)
    policy_and_dual_grad = jax.value_and_grad(
        functools.partial(policy_loss, networks=networks, config=config, support=support), argnums=(0, 1),
        has_aux=True)

    def update_step(state: TrainingState, sample: ReplaySample):
        transitions = sample.data
        key, critic_key, policy_key = jax.random.split(state.key, 3)

        (critic_loss_value, mean_q), critic_grads = critic_grad(
            state.critic_params, state.target_policy_params, state.target_critic_params, transitions, critic_key)
        critic_updates, critic_opt_state = critic_optimizer.update(critic_grads, state.critic_opt_state)
        critic_params = optax.apply_updates(state.critic_params, critic_updates)

        # The E-step after the critic's loss. Its target-critic products (num_samples actions of every state) and the
        # TD target's are the step's largest; nothing else orders them, and XLA's CPU runtime ran the two side by
        # side, each on part of the thread pool: the step took 1.10-1.22x a bare loop's, 0.94-0.95x in order
        # (benchmarks/README.md, MPO's fully jitted side-by-side). The barrier changes no value.
        observations, _ = jax.lax.optimization_barrier((transitions.observation, critic_loss_value))
        (_, (output, stddev)), (policy_grads, dual_grads) = policy_and_dual_grad(
            state.policy_params, state.dual_params, state.target_policy_params, state.target_critic_params,
            observations, policy_key)
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
        return new_state, training_metrics(critic_loss_value, mean_q, output, stddev), {}

    return update_step
