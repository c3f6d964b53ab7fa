"""BC's policy network: an MLP from flat observations to one logit per discrete action."""

import dataclasses

import jax.numpy as jnp

from acmelike.networks import MLP, FeedForwardNetwork
from acmelike.specs import EnvironmentSpec, flat_observation_size, num_discrete_actions


@dataclasses.dataclass(frozen=True)
class BCNetworks:
    policy_network: FeedForwardNetwork  # apply(params, [B, ...] observations) -> [B, A] logits
    num_actions: int


def make_networks(environment_spec: EnvironmentSpec, config) -> BCNetworks:
    """Raises ValueError naming BC and the spec when the spec does not fit."""
    num_actions = num_discrete_actions(environment_spec, agent="BC")
    flat_observation_size(environment_spec, agent="BC")
    module = MLP(layer_sizes=tuple(config.hidden_sizes) + (num_actions,))
    dummy = jnp.zeros((1,) + tuple(environment_spec.observations.shape), jnp.float32)
    return BCNetworks(FeedForwardNetwork(init=lambda key: module.init(key, dummy), apply=module.apply), num_actions)
