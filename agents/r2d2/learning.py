"""The R2D2 learning step: burn in the stored LSTM state, unroll online and target networks, n-step double Q
with value rescaling, and sequence priorities for the replay table."""

from typing import NamedTuple, Optional

import jax
import jax.numpy as jnp
import optax

from acmelike.learners.periodic import periodic_update
from acmelike.losses import sequence_priority, transformed_n_step_double_q_loss
from acmelike.types import ReplaySample
from agents.r2d2.config import R2D2Config
from agents.r2d2.networks import R2D2Networks


class TrainingState(NamedTuple):
    params: optax.Params
    target_params: optax.Params
    opt_state: optax.OptState
    steps: jax.Array


def make_optimizer(config: R2D2Config) -> optax.GradientTransformation:
    return optax.chain(optax.clip_by_global_norm(config.max_gradient_norm), optax.adam(config.learning_rate))


def init_training_state(networks: R2D2Networks, config: R2D2Config, key: jax.Array) -> TrainingState:
    params = networks.network.init(key)
    return TrainingState(
        params=params, target_params=params, opt_state=make_optimizer(config).init(params),
        steps=jnp.zeros((), jnp.int32)
    )


def step_masks(starts: jax.Array):
    """From start_of_episode flags [T + 1, ...] of a CONTINUE sequence: (mask [T], continues [T]).

    Step t is padding (the row after an episode's last observation, no action) exactly when step t + 1 starts an
    episode: mask_t = 1 for real steps, and continues_t = 1 unless step t + 1 is padding (the last step's
    successor, beyond the sequence, counts as real).
    """
    real = 1.0 - starts[1:].astype(jnp.float32)
    continues = jnp.concatenate([real[1:], jnp.ones_like(real[:1])], axis=0)
    return real, continues


def make_loss_fn(networks: R2D2Networks, config: R2D2Config):
    """Returns `loss_fn(params, target_params, sample) -> (loss, (priorities [B], mean_q))`.

    `sample.data` is an `acmelike.types.Step` batch [B, L] (L = burn_in + trace + 1) from a `SequenceAdder` that
    CONTINUEs across episodes; `extras["core_state"][:, 0]` is the LSTM state that chose each sequence's first
    action. The first `burn_in_length` steps only advance the online and target states (no gradient flows
    through them); the loss covers the `trace_length` steps after them, importance-weighted per sequence.
    """
    unroll = networks.network.unroll
    burn_in = config.burn_in_length

    def q_values(params, steps, state):
        """Q-values [L - burn_in, B, A] past the burn-in, which starts from `state` and passes no gradient."""
        observations, starts = steps.observation, steps.start_of_episode
        if burn_in:
            _, state = unroll(params, observations[:burn_in], state, starts[:burn_in])
            state = jax.lax.stop_gradient(state)
        q, _ = unroll(params, observations[burn_in:], state, starts[burn_in:])
        return q

    def loss_fn(params, target_params, sample: ReplaySample):
        steps = jax.tree_util.tree_map(lambda x: jnp.swapaxes(x, 0, 1), sample.data)  # time-major [L, B, ...]
        stored_state = jax.tree_util.tree_map(lambda x: x[0], steps.extras["core_state"])
        q_online = q_values(params, steps, stored_state)
        q_target = jax.lax.stop_gradient(q_values(target_params, steps, stored_state))
        trace = jax.tree_util.tree_map(lambda x: x[burn_in:], steps)
        mask, continues = step_masks(trace.start_of_episode)
        out = jax.vmap(
            lambda qo, qt, a, r, d, c, m: transformed_n_step_double_q_loss(
                qo, qt, a, r, d, c, m, n_step=config.n_step, rescaling_epsilon=config.rescaling_epsilon
            ),
            in_axes=1,
        )(
            q_online,
            q_target,
            trace.action[:-1].astype(jnp.int32),
            trace.reward[:-1].astype(jnp.float32),
            config.discount * trace.discount[:-1].astype(jnp.float32),
            continues,
            mask,
        )
        # Prioritized replay correction (Schaul et al., 2015), normalised by its max for stability.
        weights = (1.0 / sample.info.probability.astype(jnp.float32)) ** config.importance_sampling_exponent
        weights = weights / jnp.max(weights)
        loss = jnp.mean(weights * out.loss)
        priorities = sequence_priority(out.td_error, mask.T, config.priority_eta)  # [B]
        return loss, (priorities, jnp.mean(q_online))

    return loss_fn


def make_update_step(networks: R2D2Networks, config: R2D2Config, seeds_axis: Optional[str] = None):
    """Returns `update_step(state, sample) -> (state, metrics, extras)`: one Adam step on `make_loss_fn`'s loss, the
    target network copied every `target_update_period` steps; `extras["priorities"]` are the sampled sequences'
    new priorities. The copy is decided once for every seed along `seeds_axis` (a vmapped axis along which every
    state's `steps` is the same: the fully jitted form's seeds), so it stays a branch
    (`acmelike.learners.periodic`); None (one learner): decided on `steps` as it is."""
    optimizer = make_optimizer(config)
    loss_fn = make_loss_fn(networks, config)

    def update_step(state: TrainingState, sample: ReplaySample):
        (loss, (priorities, mean_q)), grads = jax.value_and_grad(loss_fn, has_aux=True)(
            state.params, state.target_params, sample
        )
        updates, opt_state = optimizer.update(grads, state.opt_state, state.params)
        params = optax.apply_updates(state.params, updates)
        steps = state.steps + 1
        target_params = periodic_update(params, state.target_params, steps, config.target_update_period, seeds_axis)
        new_state = TrainingState(params=params, target_params=target_params, opt_state=opt_state, steps=steps)
        metrics = {"loss": loss, "mean_q": mean_q, "gradient_norm": optax.tree.norm(grads)}
        return new_state, metrics, {"priorities": priorities}

    return update_step
