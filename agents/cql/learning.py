"""The discrete CQL learning step: double-Q TD loss plus the conservative penalty, on DQN's Q-network."""

from typing import NamedTuple

import chex
import jax
import jax.numpy as jnp
import optax

from acmelike.learners.periodic import periodic_update
from acmelike.losses import double_q_td_loss
from acmelike.types import ReplaySample


class TrainingState(NamedTuple):
    params: optax.Params
    target_params: optax.Params
    opt_state: optax.OptState
    steps: jax.Array


def conservative_penalty(q_values: jax.Array, actions: jax.Array) -> jax.Array:
    """CQL(H)'s regulariser for discrete actions (Kumar et al., 2020, eq. 4): the mean over the batch of
    `logsumexp_a Q(s, a) - Q(s, a_data)`. It pushes down Q-values of actions the dataset did not take and up the
    ones it did, so the greedy policy stays on the data's support. Gradients flow through both terms.

    Args:
      q_values: [B, A] online Q-values.
      actions: [B] the dataset's actions.
    """
    chex.assert_rank([q_values, actions], [2, 1])
    chosen = jnp.take_along_axis(q_values, actions[:, None], axis=-1)[:, 0]
    return jnp.mean(jax.nn.logsumexp(q_values, axis=-1) - chosen)


def make_optimizer(config) -> optax.GradientTransformation:
    return optax.chain(optax.clip_by_global_norm(config.max_gradient_norm), optax.adam(config.learning_rate))


def init_training_state(networks, config, key: jax.Array) -> TrainingState:
    params = networks.q_network.init(key)
    return TrainingState(params, params, make_optimizer(config).init(params), jnp.zeros((), jnp.int32))


def make_update_step(networks, config):
    """`update_step(state, sample) -> (state, metrics, extras)` on uniform batches of one-step transitions:
    loss = double-Q TD loss + `cql_alpha` * conservative_penalty; the target network is copied every
    `target_update_period` SGD steps."""
    optimizer = make_optimizer(config)
    apply = networks.q_network.apply

    def loss_fn(params, target_params, sample: ReplaySample):
        transitions = sample.data
        actions = transitions.action.astype(jnp.int32)
        q_tm1 = apply(params, transitions.observation)
        td_loss, _ = double_q_td_loss(
            q_tm1=q_tm1, a_tm1=actions, r_t=transitions.reward.astype(jnp.float32),
            discount_t=transitions.discount.astype(jnp.float32),
            q_t_value=apply(target_params, transitions.next_observation),
            q_t_selector=apply(params, transitions.next_observation),
            importance_weights=jnp.ones_like(transitions.reward, jnp.float32),
            huber_loss_parameter=config.huber_loss_parameter,
        )
        penalty = conservative_penalty(q_tm1, actions)
        return td_loss + config.cql_alpha * penalty, (td_loss, penalty, jnp.mean(q_tm1))

    def update_step(state: TrainingState, sample: ReplaySample):
        (loss, (td_loss, penalty, mean_q)), grads = jax.value_and_grad(loss_fn, has_aux=True)(
            state.params, state.target_params, sample
        )
        updates, opt_state = optimizer.update(grads, state.opt_state, state.params)
        params = optax.apply_updates(state.params, updates)
        steps = state.steps + 1
        target_params = periodic_update(params, state.target_params, steps, config.target_update_period)
        metrics = {"loss": loss, "td_loss": td_loss, "cql_penalty": penalty, "mean_q": mean_q}
        return TrainingState(params, target_params, opt_state, steps), metrics, {}

    return update_step
