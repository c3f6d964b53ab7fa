"""The MuZero learning step: unroll the model K steps along each stored sequence's actions and fit, at every step,
the search's policy, the n-step value target and the observed reward (all categorical but the policy); sequence
priorities from the first step's value error. Optionally Reanalyse: fresh policy targets from a search with the
target network for part of each batch."""

import functools
from typing import NamedTuple, Optional

import jax
import jax.numpy as jnp
import optax

from acmelike.learners.periodic import periodic_update
from acmelike.losses.muzero import masked_cross_entropy, scale_gradient, unroll_targets, value_error_priority
from acmelike.types import ReplaySample
from agents.muzero.acting import search_options, search_policy
from agents.muzero.config import MuZeroConfig
from agents.muzero.networks import MuZeroNetworks

LOSS_KEYS = ("loss",)


class TrainingState(NamedTuple):
    params: optax.Params
    target_params: optax.Params
    opt_state: optax.OptState
    key: jax.Array  # the reanalysing searches' randomness
    steps: jax.Array


def make_optimizer(config: MuZeroConfig) -> optax.GradientTransformation:
    return optax.chain(
        optax.clip_by_global_norm(config.max_gradient_norm),
        optax.adamw(config.learning_rate, weight_decay=config.weight_decay),
    )


def init_training_state(networks: MuZeroNetworks, config: MuZeroConfig, key: jax.Array) -> TrainingState:
    params = networks.init(key)  # from `key` itself, so the parameters are those of a learner without a key
    return TrainingState(params=params, target_params=params, opt_state=make_optimizer(config).init(params),
                         key=jax.random.fold_in(key, 1), steps=jnp.zeros((), jnp.int32))


class Unroll(NamedTuple):
    policy_logits: jax.Array  # [B, K + 1, A]
    value_logits: jax.Array  # [B, K + 1, num_bins]
    reward_logits: jax.Array  # [B, K, num_bins]


def unroll_model(networks: MuZeroNetworks, params, observations: jax.Array, actions: jax.Array) -> Unroll:
    """The model's predictions along `actions` [B, K] from `observations` [B, ...]: step 0 predicts from the
    representation of the observation, step k + 1 from the dynamics applied to step k's hidden state and action k
    (whose reward logits are step k's). The gradient into each dynamics step's input hidden state is halved."""

    def step(embedding, action):
        policy_logits, value_logits = networks.predict(params, embedding)
        next_embedding, reward_logits = networks.dynamics(params, scale_gradient(embedding, 0.5), action)
        return next_embedding, (policy_logits, value_logits, reward_logits)

    embedding = networks.represent(params, observations)
    last, (policy_logits, value_logits, reward_logits) = jax.lax.scan(step, embedding, jnp.swapaxes(actions, 0, 1))
    last_policy_logits, last_value_logits = networks.predict(params, last)
    return Unroll(  # scan stacks steps first: [K (+ 1), B, ...] -> [B, K (+ 1), ...]
        policy_logits=jnp.swapaxes(jnp.concatenate([policy_logits, last_policy_logits[None]], 0), 0, 1),
        value_logits=jnp.swapaxes(jnp.concatenate([value_logits, last_value_logits[None]], 0), 0, 1),
        reward_logits=jnp.swapaxes(reward_logits, 0, 1),
    )


def make_loss_fn(networks: MuZeroNetworks, config: MuZeroConfig):
    """Returns `loss_fn(params, target_params, sample) -> (loss, (priorities [B], metrics))`.

    `sample.data` is a `Step` batch [B, L] (L = K + n + 1) from a `SequenceAdder` that CONTINUEs across episodes,
    with extras `action_weights` [B, L, A] (the search's policy) and `root_value` [B, L]. Per sequence, for the
    unroll steps k = 0 .. K from its first observation along its stored actions (`acmelike.losses.muzero.
    unroll_targets` gives targets and masks):
      loss = sum_k [CE(policy_k, action_weights_k) + value_loss_weight CE(value_k, phi(z_k))
                    + CE(reward_k, phi(r_k))] / (K + 1)          (phi: the categorical transform; masked terms drop)
    z_k bootstraps from the target network's value of the observation n steps later, or from the stored search
    value there (`config.value_bootstrap`). Sequences are weighted by (1 / P) ** beta, normalised by the batch's
    largest weight; the priority is |h(v_0) - h(z_0)|, the first step's value error in the rescaled space.
    """
    k, n = config.num_unroll_steps, config.n_step
    targets_fn = jax.vmap(functools.partial(unroll_targets, num_unroll_steps=k, n_step=n))

    def bootstrap_values(target_params, steps):
        if config.value_bootstrap == "search":
            return steps.extras["root_value"]
        flat = jnp.reshape(steps.observation, (-1,) + steps.observation.shape[2:])
        _, value_logits = networks.predict(target_params, networks.represent(target_params, flat))
        return jnp.reshape(networks.to_scalar(value_logits), steps.reward.shape)

    def loss_fn(params, target_params, sample: ReplaySample):
        steps = sample.data
        targets = targets_fn(
            steps.reward, config.discount * steps.discount.astype(jnp.float32),
            bootstrap_values(target_params, steps), steps.start_of_episode,
        )
        unroll = unroll_model(networks, params, steps.observation[:, 0], steps.action[:, :k].astype(jnp.int32))
        policy_loss = masked_cross_entropy(
            unroll.policy_logits, steps.extras["action_weights"][:, : k + 1], targets.policy_mask)
        value_loss = masked_cross_entropy(
            unroll.value_logits, networks.transform.apply(targets.values), targets.value_mask)
        reward_loss = masked_cross_entropy(
            unroll.reward_logits, networks.transform.apply(targets.rewards), targets.reward_mask)
        per_sequence = (jnp.sum(policy_loss, -1) + config.value_loss_weight * jnp.sum(value_loss, -1)
                        + jnp.sum(reward_loss, -1)) / (k + 1)
        # Prioritized replay correction (Schaul et al., 2015), normalised by its max for stability.
        weights = (1.0 / sample.info.probability.astype(jnp.float32)) ** config.importance_sampling_exponent
        weights = weights / jnp.max(weights)
        loss = jnp.mean(weights * per_sequence)
        values = networks.to_scalar(unroll.value_logits)
        priorities = value_error_priority(
            values[:, 0], targets.values[:, 0], targets.value_mask[:, 0], config.rescaling_epsilon)
        steps_in_loss = jnp.maximum(jnp.sum(targets.value_mask), 1.0)
        metrics = {
            "policy_loss": jnp.sum(policy_loss) / steps_in_loss,
            "value_loss": jnp.sum(value_loss) / steps_in_loss,
            "reward_loss": jnp.sum(reward_loss) / steps_in_loss,
            "mean_value": jnp.sum(values * targets.value_mask) / steps_in_loss,
            "mean_value_target": jnp.sum(targets.values * targets.value_mask) / steps_in_loss,
        }
        return loss, (priorities, metrics)

    return loss_fn


def make_reanalyse(networks: MuZeroNetworks, config: MuZeroConfig):
    """Returns `reanalyse(params, key, sample) -> (sample, metrics)`: MuZero Reanalyse (Schrittwieser et al., 2021).

    The first round(`reanalyse_fraction` x `batch_size`) sequences of the batch (a random sample, so a random
    subset) get their policy targets `extras["action_weights"]` at steps 0 .. K replaced by those of a search from
    each stored observation with `params` (the actors' search options, exploration included), stopped from
    gradients; the rest keep the actors' stored targets. A search is as good as the model it plans in: the
    stored targets come from the parameters an actor held when it acted, older the longer a sequence stays in
    replay. The update step passes the target network's parameters, as LightZero reanalyses with its target model:
    a target from the parameters being trained (softmax(prior + sigma(Q)) for Gumbel) moves with every step the
    prior takes toward it: on CartPole-v1 (16 samples per insert), reanalysing a quarter of each batch so ended at
    124 after 50k steps, where the stored targets alone reached 475 after 39.7k (agents/muzero/README.md).
    `metrics["reanalyse_target_shift"]`: the mean total variation between the stored and the fresh targets.
    With `reanalyse_fraction` 0 it returns `sample` unchanged and no metrics.
    """
    k = config.num_unroll_steps
    count = int(round(config.reanalyse_fraction * config.batch_size))
    options = search_options(config)

    def reanalyse(params, key, sample: ReplaySample):
        steps = sample.data
        reanalysed = min(count, steps.observation.shape[0])
        if reanalysed == 0:
            return sample, {}
        observations = steps.observation[:reanalysed, : k + 1]
        output = search_policy(networks, params, key, jnp.reshape(observations, (-1,) + observations.shape[2:]),
                               **options)
        stored = steps.extras["action_weights"]
        fresh = jax.lax.stop_gradient(jnp.reshape(output.action_weights, (reanalysed, k + 1, -1)))
        shift = 0.5 * jnp.mean(jnp.sum(jnp.abs(fresh - stored[:reanalysed, : k + 1]), -1))
        weights = stored.at[:reanalysed, : k + 1].set(fresh.astype(stored.dtype))
        data = steps._replace(extras={**steps.extras, "action_weights": weights})
        return sample._replace(data=data), {"reanalyse_target_shift": shift}

    return reanalyse


def make_update_step(networks: MuZeroNetworks, config: MuZeroConfig, seeds_axis: Optional[str] = None):
    """Returns `update_step(state, sample) -> (state, metrics, extras)`: one AdamW step on `make_loss_fn`'s loss,
    the target network copied every `target_update_period` steps, after `make_reanalyse` refreshed part of the
    batch's policy targets with the target network (none by default); `extras["priorities"]` are the sampled
    sequences' new priorities. The copy is decided once for every seed along `seeds_axis` (a vmapped axis along
    which every state's `steps` is the same: the fully jitted form's seeds), so it stays a branch
    (`acmelike.learners.periodic`); None (one learner): decided on `steps` as it is."""
    optimizer = make_optimizer(config)
    loss_fn = make_loss_fn(networks, config)
    reanalyse = make_reanalyse(networks, config)

    def update_step(state: TrainingState, sample: ReplaySample):
        key, reanalyse_key = jax.random.split(state.key)
        sample, reanalyse_metrics = reanalyse(state.target_params, reanalyse_key, sample)
        (loss, (priorities, metrics)), grads = jax.value_and_grad(loss_fn, has_aux=True)(
            state.params, state.target_params, sample)
        updates, opt_state = optimizer.update(grads, state.opt_state, state.params)
        params = optax.apply_updates(state.params, updates)
        steps = state.steps + 1
        target_params = periodic_update(params, state.target_params, steps, config.target_update_period, seeds_axis)
        new_state = TrainingState(params=params, target_params=target_params, opt_state=opt_state, key=key,
                                  steps=steps)
        metrics = {"loss": loss, "gradient_norm": optax.tree.norm(grads), **metrics, **reanalyse_metrics}
        return new_state, metrics, {"priorities": priorities}

    return update_step
