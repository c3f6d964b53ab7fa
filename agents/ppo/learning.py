"""The PPO learning step: GAE over each sequence, then epochs of shuffled minibatches, all in one jitted call."""

from typing import NamedTuple

import jax
import jax.numpy as jnp
import optax

from acmelike.losses import generalized_advantage_estimation, ppo_loss
from acmelike.types import ReplaySample
from agents.ppo.config import PPOConfig
from agents.ppo.networks import PPONetworks


class TrainingState(NamedTuple):
    params: optax.Params
    opt_state: optax.OptState
    key: jax.Array
    steps: jax.Array


def make_optimizer(config: PPOConfig) -> optax.GradientTransformation:
    return optax.chain(optax.clip_by_global_norm(config.max_gradient_norm), optax.adam(config.learning_rate, eps=1e-5))


def init_training_state(networks: PPONetworks, config: PPOConfig, key: jax.Array) -> TrainingState:
    init_key, key = jax.random.split(key)
    params = networks.network.init(init_key)
    return TrainingState(params=params, opt_state=make_optimizer(config).init(params), key=key, steps=jnp.zeros((), jnp.int32))


def minibatch_epochs(optimizer: optax.GradientTransformation, loss_fn, params, opt_state, data, key: jax.Array, *,
                     num_epochs: int, num_minibatches: int):
    """PPO's optimisation: `num_epochs` passes over `data` (a pytree of `[N, ...]` arrays), each a fresh shuffle cut
    into `num_minibatches` minibatches of `N // num_minibatches` items (the remainder is left out of that pass), one
    optimizer step on `loss_fn(params, minibatch) -> (loss, aux)` per minibatch.

    Returns `(params, opt_state, aux)`, `aux` stacked `[num_epochs, num_minibatches, ...]`.
    """
    num_items = jax.tree_util.tree_leaves(data)[0].shape[0]
    minibatch_size = num_items // num_minibatches

    def sgd_step(carry, minibatch):
        params, opt_state = carry
        (_, aux), grads = jax.value_and_grad(loss_fn, has_aux=True)(params, minibatch)
        updates, opt_state = optimizer.update(grads, opt_state, params)
        return (optax.apply_updates(params, updates), opt_state), aux

    def epoch(carry, key):
        permutation = jax.random.permutation(key, num_items)
        shuffled = jax.tree_util.tree_map(
            lambda x: jnp.reshape(x[permutation], (num_minibatches, minibatch_size) + x.shape[1:]), data)
        return jax.lax.scan(sgd_step, carry, shuffled)

    (params, opt_state), aux = jax.lax.scan(epoch, (params, opt_state), jax.random.split(key, num_epochs))
    return params, opt_state, aux


def make_update_step(networks: PPONetworks, config: PPOConfig):
    """Returns `update_step(state, sample) -> (state, metrics, extras)`.

    `sample.data` is an `acmelike.types.Step` batch shaped [B, T + 1] (T = unroll_length) written by a
    `SequenceAdder` that CONTINUEs across episodes: step t is the padding step after an episode's last
    observation exactly when step t + 1 starts an episode. Such steps are masked out of the loss and cut GAE.
    """
    optimizer = make_optimizer(config)
    apply = networks.network.apply

    def advantages_and_returns(params, steps):
        batch, length = steps.reward.shape[:2]
        observations = jnp.reshape(steps.observation, (batch * length,) + steps.observation.shape[2:])
        _, values = apply(params, observations)
        values = jnp.reshape(values, (batch, length))
        starts = steps.start_of_episode.astype(jnp.float32)
        mask = 1.0 - starts[:, 1:]  # [B, T]: step t is real unless step t+1 starts an episode
        # GAE may carry A_{t+1} into A_t only if step t+1 is real; the last step's A is 0 (bootstrap) anyway.
        continues = jnp.concatenate([mask[:, 1:], jnp.ones((batch, 1))], axis=1)
        discounts = config.discount * steps.discount[:, :-1].astype(jnp.float32)
        advantages = jax.vmap(generalized_advantage_estimation, in_axes=(0, 0, 0, None, 0))(
            steps.reward[:, :-1].astype(jnp.float32), discounts, values, config.gae_lambda, continues
        )
        returns = advantages + values[:, :-1]
        return advantages, returns, mask

    def update_step(state: TrainingState, sample: ReplaySample):
        steps = sample.data
        advantages, returns, mask = advantages_and_returns(state.params, steps)
        if config.normalize_advantages:
            count = jnp.maximum(mask.sum(), 1.0)
            mean = jnp.sum(advantages * mask) / count
            std = jnp.sqrt(jnp.sum(jnp.square(advantages - mean) * mask) / count)
            advantages = (advantages - mean) / (std + 1e-8)

        def flat(x):  # [B, T + 1, ...] or [B, T, ...] -> [B * T, ...]
            x = x[:, : mask.shape[1]]
            return jnp.reshape(x, (-1,) + x.shape[2:])

        data = dict(
            observation=flat(steps.observation),
            action=flat(steps.action).astype(jnp.int32),
            log_prob=flat(steps.extras["log_prob"]).astype(jnp.float32),
            advantage=flat(advantages),
            returns=flat(returns),
            mask=flat(mask),
        )

        def loss_fn(params, minibatch):
            logits, values = apply(params, minibatch["observation"])
            out = ppo_loss(
                logits,
                values,
                minibatch["action"],
                minibatch["log_prob"],
                minibatch["advantage"],
                minibatch["returns"],
                minibatch["mask"],
                clip_epsilon=config.clip_epsilon,
                value_cost=config.value_cost,
                entropy_cost=config.entropy_cost,
            )
            return out.loss, out

        key, epoch_key = jax.random.split(state.key)
        params, opt_state, outs = minibatch_epochs(
            optimizer, loss_fn, state.params, state.opt_state, data, epoch_key,
            num_epochs=config.num_epochs, num_minibatches=config.num_minibatches,
        )
        metrics = {name: jnp.mean(value) for name, value in outs._asdict().items()}
        metrics["mask_fraction"] = jnp.mean(mask)
        new_state = TrainingState(params=params, opt_state=opt_state, key=key, steps=state.steps + 1)
        return new_state, metrics, {}

    return update_step
