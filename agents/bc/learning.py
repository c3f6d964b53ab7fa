"""The BC learning step: maximum likelihood of the dataset's actions under a categorical policy."""

from typing import NamedTuple

import jax
import jax.numpy as jnp
import optax

from acmelike.types import ReplaySample


class TrainingState(NamedTuple):
    params: optax.Params
    opt_state: optax.OptState
    steps: jax.Array


def init_training_state(network, config, key: jax.Array) -> TrainingState:
    params = network.init(key)
    return TrainingState(params, optax.adam(config.learning_rate).init(params), jnp.zeros((), jnp.int32))


def make_update_step(network, config):
    """`update_step(state, sample) -> (state, metrics, extras)`: one Adam step on the mean negative
    log-likelihood -log pi(a|s) of the batch's actions (`sample.data`: Transition with [B] integer actions)."""
    optimizer = optax.adam(config.learning_rate)

    def loss_fn(params, sample: ReplaySample):
        logits = network.apply(params, sample.data.observation)  # [B, A]
        actions = sample.data.action.astype(jnp.int32)  # [B]
        log_probs = jax.nn.log_softmax(logits)
        chosen = jnp.take_along_axis(log_probs, actions[:, None], axis=-1)[:, 0]
        accuracy = jnp.mean(jnp.argmax(logits, axis=-1) == actions)
        return -jnp.mean(chosen), accuracy

    def update_step(state: TrainingState, sample: ReplaySample):
        (loss, accuracy), grads = jax.value_and_grad(loss_fn, has_aux=True)(state.params, sample)
        updates, opt_state = optimizer.update(grads, state.opt_state, state.params)
        params = optax.apply_updates(state.params, updates)
        new_state = TrainingState(params, opt_state, state.steps + 1)
        return new_state, {"loss": loss, "accuracy": accuracy}, {}

    return update_step
