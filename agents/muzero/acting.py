"""MuZero's actor core: a search in the learned model (`mctx`: Gumbel MuZero's, or the original pUCT one) chooses
every action."""

import functools
from typing import NamedTuple

import jax
import jax.numpy as jnp
import mctx

from acmelike.actors import ActorCore
from agents.muzero.networks import MuZeroNetworks


class SearchState(NamedTuple):
    key: jax.Array
    action_weights: jax.Array  # [A] the last search's improved policy: the policy target of its step
    root_value: jax.Array  # [] the last search's value of its root


def search_policy(
    networks: MuZeroNetworks,
    params,
    key: jax.Array,
    observations: jax.Array,
    *,
    search: str,
    num_simulations: int,
    discount: float,
    max_num_considered_actions: int,
    gumbel_scale: float,
    value_scale: float,
    rescale_q_values: bool,
    dirichlet_alpha: float,
    dirichlet_fraction: float,
    visit_temperature: float,
) -> mctx.PolicyOutput:
    """Runs a search from `[B, ...]` observations in the model `networks`.

    The root is the representation of each observation; every simulated step applies the dynamics and the
    prediction, with rewards and values mapped from their categorical heads to scalars and a constant `discount`
    (the model does not predict episode ends).

    `search` "gumbel": `mctx.gumbel_muzero_policy` (Danihelka et al., 2022). Sequential Halving over up to
    `max_num_considered_actions` Gumbel-perturbed root actions (`gumbel_scale`); Q-values are completed by mctx's
    mixed value and scaled by `value_scale` (min-max normalised first if `rescale_q_values`); `action_weights` =
    softmax(prior logits + sigma(completed Q-values)).
    `search` "puct": `mctx.muzero_policy` (Schrittwieser et al., 2020). pUCT selection on min-max normalised
    Q-values, Dirichlet(`dirichlet_alpha`) noise mixed into the root prior with weight `dirichlet_fraction`; the
    action is drawn from visit counts ** (1 / `visit_temperature`) (0: the most visited); `action_weights` = the
    visit distribution.

    Returns mctx's `PolicyOutput`: `action` [B], `action_weights` [B, A] (the policy target) and the tree.
    """

    def recurrent_fn(params, rng_key, actions, embedding):
        del rng_key
        next_embedding, reward_logits = networks.dynamics(params, embedding, actions)
        policy_logits, value_logits = networks.predict(params, next_embedding)
        output = mctx.RecurrentFnOutput(
            reward=networks.to_scalar(reward_logits),
            discount=jnp.full(actions.shape, discount, jnp.float32),
            prior_logits=policy_logits,
            value=networks.to_scalar(value_logits),
        )
        return output, next_embedding

    embedding = networks.represent(params, observations)
    policy_logits, value_logits = networks.predict(params, embedding)
    root = mctx.RootFnOutput(prior_logits=policy_logits, value=networks.to_scalar(value_logits), embedding=embedding)
    if search == "puct":
        return mctx.muzero_policy(
            params, key, root, recurrent_fn, num_simulations, dirichlet_fraction=dirichlet_fraction,
            dirichlet_alpha=dirichlet_alpha, temperature=visit_temperature,
        )
    qtransform = functools.partial(
        mctx.qtransform_completed_by_mix_value, value_scale=value_scale, rescale_values=rescale_q_values)
    return mctx.gumbel_muzero_policy(
        params, key, root, recurrent_fn, num_simulations, qtransform=qtransform,
        max_num_considered_actions=max_num_considered_actions, gumbel_scale=gumbel_scale,
    )


def search_core(networks: MuZeroNetworks, **search_options) -> ActorCore:
    """Acts with the action a search (`search_policy`, with `search_options`) chooses for one observation.

    The search runs inside `select_action`, so it is jitted with the actor's step and vmapped over a batched
    actor's environments like any policy; the environment loop sees only actions. Extras:
    `{"action_weights": [A], "root_value": []}` of the search that chose the action, the learner's policy target
    and a bootstrap value.
    """

    def init(key):
        return SearchState(
            key=key,
            action_weights=jnp.full((networks.num_actions,), 1.0 / networks.num_actions, jnp.float32),
            root_value=jnp.zeros((), jnp.float32),
        )

    def select_action(params, observation, state):
        key, search_key = jax.random.split(state.key)
        output = search_policy(networks, params, search_key, observation[None], **search_options)
        root_value = output.search_tree.summary().value[0]
        return output.action[0], SearchState(key=key, action_weights=output.action_weights[0], root_value=root_value)

    def get_extras(state):
        return {"action_weights": state.action_weights, "root_value": state.root_value}

    return ActorCore(init=init, select_action=select_action, get_extras=get_extras)


def search_options(config, evaluation: bool = False) -> dict:
    """`search_policy`'s keyword options from a `MuZeroConfig`. The evaluation search explores not at all: no
    Gumbel or Dirichlet noise, and the most visited action (pUCT)."""
    return dict(
        search=config.search,
        num_simulations=config.num_simulations,
        discount=config.discount,
        max_num_considered_actions=config.max_num_considered_actions,
        gumbel_scale=0.0 if evaluation else config.gumbel_scale,
        value_scale=config.value_scale,
        rescale_q_values=config.rescale_q_values,
        dirichlet_alpha=config.dirichlet_alpha,
        dirichlet_fraction=0.0 if evaluation else config.dirichlet_fraction,
        visit_temperature=0.0 if evaluation else config.visit_temperature,
    )
