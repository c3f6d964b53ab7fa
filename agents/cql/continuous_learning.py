"""Continuous CQL(H) (Kumar et al., 2020): SAC's learning step with the conservative penalty on its critics."""

import chex
import jax
import jax.numpy as jnp

from acmelike.actors.continuous import squashed_gaussian_sample, to_unit
from agents.sac import learning as sac_learning
from agents.sac.networks import SACNetworks

init_training_state = sac_learning.init_training_state
LOSS_KEYS = sac_learning.LOSS_KEYS


def continuous_conservative_penalty(q_sampled: jax.Array, log_density: jax.Array, q_data: jax.Array) -> jax.Array:
    """CQL(H)'s regulariser for continuous actions (Kumar et al., 2020, eq. 4; the log-sum-exp over actions
    estimated by importance sampling, their appendix F): for each critic,
    mean_b [log (1/N) sum_i exp(Q(s_b, a_i) - log mu(a_i | s_b)) - Q(s_b, a_b)], summed over the critics.

    It pushes down the soft maximum of Q over all actions and up Q at the dataset's actions, so Q-values of
    actions the data never took cannot grow unchecked. Gradients flow through both Q terms; `log_density` is a
    constant (stop its gradient before calling, as the actions are samples).

    Args:
      q_sampled: [K, N, B] Q-values of N sampled actions per state, for K critics.
      log_density: [N, B] log-density of each sampled action under the distribution it was drawn from.
      q_data: [K, B] Q-values of the dataset's actions.
    """
    chex.assert_rank([q_sampled, log_density, q_data], [3, 2, 2])
    chex.assert_equal_shape([q_sampled[0], log_density])
    num_samples = q_sampled.shape[1]
    soft_maximum = jax.nn.logsumexp(q_sampled - log_density[None], axis=1) - jnp.log(num_samples)  # [K, B]
    return jnp.sum(jnp.mean(soft_maximum - q_data, axis=-1))


def make_conservative_regulariser(networks: SACNetworks, config):
    """`regulariser(critic_params, policy_params, transitions, key) -> cql_alpha * penalty`, for
    `sac_learning.make_update_step`: the log-sum-exp is estimated from `num_sampled_actions` uniform actions
    (density 2^-A on the unit box) and as many from the current policy at each state."""
    bounds, count = networks.bounds, config.num_sampled_actions

    def regulariser(critic_params, policy_params, transitions, key):
        observations = transitions.observation
        batch = observations.shape[0]
        uniform_key, policy_key = jax.random.split(key)
        uniform = jax.random.uniform(uniform_key, (count, batch, bounds.size), minval=-1.0, maxval=1.0)
        uniform_log_density = jnp.full((count, batch), -bounds.size * jnp.log(2.0))
        mean, log_std = networks.policy.apply(policy_params, observations)
        policy_actions, policy_log_density = jax.vmap(lambda k: squashed_gaussian_sample(mean, log_std, k))(
            jax.random.split(policy_key, count)
        )
        actions = jax.lax.stop_gradient(jnp.concatenate([uniform, policy_actions]))  # [2N, B, A]
        log_density = jax.lax.stop_gradient(jnp.concatenate([uniform_log_density, policy_log_density]))
        q_sampled = jax.vmap(lambda a: networks.critic.apply(critic_params, observations, a), out_axes=1)(actions)
        q_data = networks.critic.apply(critic_params, observations, to_unit(transitions.action, bounds))
        return config.cql_alpha * continuous_conservative_penalty(q_sampled, log_density, q_data)

    return regulariser


def make_update_step(networks: SACNetworks, config):
    """SAC's `update_step` (agents.sac.learning) whose critic loss adds `cql_alpha` * the conservative penalty."""
    return sac_learning.make_update_step(networks, config, make_conservative_regulariser(networks, config))
