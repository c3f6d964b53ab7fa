"""The IMPALA learning step: unroll the LSTM network over each sequence, then V-trace actor-critic, one SGD step."""

from typing import NamedTuple

import jax
import jax.numpy as jnp
import optax

from acmelike.losses import impala_loss
from acmelike.types import ReplaySample
from agents.impala.config import IMPALAConfig
from agents.impala.networks import IMPALANetworks


class TrainingState(NamedTuple):
    params: optax.Params
    opt_state: optax.OptState
    steps: jax.Array


def make_optimizer(config: IMPALAConfig) -> optax.GradientTransformation:
    learning_rate = config.learning_rate
    if config.learning_rate_decay_steps:
        learning_rate = optax.linear_schedule(config.learning_rate, 0.0, config.learning_rate_decay_steps)
    adam = optax.adam(learning_rate, b1=config.adam_momentum_decay, b2=config.adam_variance_decay)
    return optax.chain(optax.clip_by_global_norm(config.max_gradient_norm), adam)


def init_training_state(networks: IMPALANetworks, config: IMPALAConfig, key: jax.Array) -> TrainingState:
    params = networks.network.init(key)
    return TrainingState(params=params, opt_state=make_optimizer(config).init(params), steps=jnp.zeros((), jnp.int32))


def make_update_step(networks: IMPALANetworks, config: IMPALAConfig):
    """Returns `update_step(state, sample) -> (state, metrics, extras)`.

    `sample.data` is an `acmelike.types.Step` batch shaped [B, T + 1] (T = unroll_length) from a `SequenceAdder`
    that CONTINUEs across episodes, with extras `core_state` (the LSTM state that chose each action) and `logits`
    (the behaviour policy). The unroll starts from the first step's stored state and resets wherever an episode
    starts; step t is padding (no action: the row after an episode's last observation) when step t + 1 starts an
    episode. Rewards enter V-trace multiplied by `config.reward_scale` (the values estimate scaled returns).
    """
    optimizer = make_optimizer(config)
    network = networks.network

    def loss_fn(params, steps):
        time_major = jax.tree_util.tree_map(lambda x: jnp.swapaxes(x, 0, 1), steps)  # [T + 1, B, ...]
        initial_state = jax.tree_util.tree_map(lambda x: x[:, 0], steps.extras["core_state"])
        (logits, values), _ = network.unroll(params, time_major.observation, initial_state, time_major.start_of_episode)
        mask = 1.0 - time_major.start_of_episode[1:].astype(jnp.float32)  # [T, B]
        out = jax.vmap(
            lambda lg, v, a, r, d, mu, m: impala_loss(
                lg,
                v,
                a,
                r,
                d,
                mu,
                m,
                lambda_=config.vtrace_lambda,
                clip_rho_threshold=config.clip_rho_threshold,
                clip_pg_rho_threshold=config.clip_pg_rho_threshold,
                baseline_cost=config.baseline_cost,
                entropy_cost=config.entropy_cost,
            ),
            in_axes=1,
        )(
            logits[:-1],
            values,
            time_major.action[:-1].astype(jnp.int32),
            config.reward_scale * time_major.reward[:-1].astype(jnp.float32),
            config.discount * time_major.discount[:-1].astype(jnp.float32),
            time_major.extras["logits"][:-1].astype(jnp.float32),
            mask,
        )
        return jnp.mean(out.loss), (out, mask)

    def update_step(state: TrainingState, sample: ReplaySample):
        (loss, (out, mask)), grads = jax.value_and_grad(loss_fn, has_aux=True)(state.params, sample.data)
        updates, opt_state = optimizer.update(grads, state.opt_state, state.params)
        params = optax.apply_updates(state.params, updates)
        metrics = {
            "loss": loss,
            "pg_loss": jnp.mean(out.pg_loss),
            "baseline_loss": jnp.mean(out.baseline_loss),
            "entropy": jnp.mean(out.entropy),
            "real_fraction": jnp.mean(mask),
            # KL(mu || pi) over real steps: 0 on policy; it grows as the actors' parameters lag the learner's.
            "behaviour_kl": -jnp.sum(out.log_importance_ratios) / jnp.maximum(jnp.sum(mask), 1.0),
            "gradient_norm": optax.tree.norm(grads),
        }
        return TrainingState(params=params, opt_state=opt_state, steps=state.steps + 1), metrics, {}

    return update_step
