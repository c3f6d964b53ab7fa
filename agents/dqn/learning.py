"""The DQN learning step: a `TrainingState` and a pure `update_step`, jitted by the learner shell."""

from typing import NamedTuple, Optional

import jax
import jax.numpy as jnp
import optax

from acmelike.learners.periodic import periodic_update
from acmelike.losses import double_q_td_loss
from acmelike.types import ReplaySample
from agents.dqn.config import DQNConfig
from agents.dqn.networks import DQNNetworks


class TrainingState(NamedTuple):
    params: optax.Params
    target_params: optax.Params
    opt_state: optax.OptState
    steps: jax.Array


def make_optimizer(config: DQNConfig) -> optax.GradientTransformation:
    if config.optimizer == "rmsprop":
        # PyTorch's RMSprop(alpha=0.95, eps=0.01, momentum=0.95, centered=True), the MinAtar paper's: eps after
        # the square root bounds the step where gradients are small, which Adam's 1e-8 does not.
        step = optax.rmsprop(config.learning_rate, decay=0.95, eps=0.01, eps_in_sqrt=False, centered=True,
                             momentum=0.95)
    else:
        step = optax.adam(config.learning_rate)
    return optax.chain(optax.clip_by_global_norm(config.max_gradient_norm), step)


def init_training_state(networks: DQNNetworks, config: DQNConfig, key: jax.Array) -> TrainingState:
    params = networks.q_network.init(key)
    return TrainingState(
        params=params,
        target_params=params,
        opt_state=make_optimizer(config).init(params),
        steps=jnp.zeros((), jnp.int32),
    )


def make_update_step(networks: DQNNetworks, config: DQNConfig, seeds_axis: Optional[str] = None):
    """Returns `update_step(state, sample) -> (state, metrics, extras)` for batches of n-step transitions.

    `sample.data` is an `acmelike.types.Transition` with total discounts; `extras["priorities"]` are the |TD|
    errors the replay table should store for the sampled items. The target network is copied every
    `target_update_period` steps, decided once for every seed along `seeds_axis` (a vmapped axis along which every
    state's `steps` is the same: the fully jitted form's seeds), so it stays a branch
    (`acmelike.learners.periodic`); None (one learner): decided on `steps` as it is.
    """
    optimizer = make_optimizer(config)
    apply = networks.q_network.apply

    def loss_fn(params, target_params, sample: ReplaySample):
        transitions = sample.data
        # Prioritized replay correction (Schaul et al., 2015), normalised by its max for stability.
        weights = (1.0 / sample.info.probability.astype(jnp.float32)) ** config.importance_sampling_exponent
        weights = weights / jnp.max(weights)
        q_tm1 = apply(params, transitions.observation)
        q_t_selector = apply(params, transitions.next_observation)
        q_t_value = apply(target_params, transitions.next_observation)
        loss, td_error = double_q_td_loss(
            q_tm1=q_tm1,
            a_tm1=transitions.action.astype(jnp.int32),
            r_t=transitions.reward.astype(jnp.float32),
            discount_t=transitions.discount.astype(jnp.float32),
            q_t_value=q_t_value,
            q_t_selector=q_t_selector,
            importance_weights=weights,
            huber_loss_parameter=config.huber_loss_parameter,
        )
        return loss, (td_error, jnp.mean(q_tm1))

    def update_step(state: TrainingState, sample: ReplaySample):
        (loss, (td_error, mean_q)), grads = jax.value_and_grad(loss_fn, has_aux=True)(
            state.params, state.target_params, sample
        )
        updates, opt_state = optimizer.update(grads, state.opt_state, state.params)
        params = optax.apply_updates(state.params, updates)
        steps = state.steps + 1
        target_params = periodic_update(params, state.target_params, steps, config.target_update_period, seeds_axis)
        new_state = TrainingState(params=params, target_params=target_params, opt_state=opt_state, steps=steps)
        metrics = {"loss": loss, "mean_q": mean_q, "gradient_norm": optax.tree.norm(grads)}
        return new_state, metrics, {"priorities": jnp.abs(td_error)}

    return update_step
