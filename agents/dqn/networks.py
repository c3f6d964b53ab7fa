"""The DQN Q-network: an MLP from flat observations to one Q-value per discrete action."""

import dataclasses
import jax.numpy as jnp

from acmelike.networks import MLP, FeedForwardNetwork
from acmelike.specs import EnvironmentSpec, flat_observation_size, num_discrete_actions
from agents.dqn.config import DQNConfig


@dataclasses.dataclass(frozen=True)
class DQNNetworks:
    q_network: FeedForwardNetwork  # apply(params, [B, ...] observations) -> [B, A] Q-values
    num_actions: int


def make_networks(environment_spec: EnvironmentSpec, config: DQNConfig = DQNConfig()) -> DQNNetworks:
    """Builds the Q-network (sizes from `config.hidden_sizes`) for `environment_spec`.

    Raises ValueError naming DQN and the spec that does not fit.
    """
    num_actions = num_discrete_actions(environment_spec, agent="DQN")
    flat_observation_size(environment_spec, agent="DQN")
    module = MLP(layer_sizes=tuple(config.hidden_sizes) + (num_actions,))
    dummy = jnp.zeros((1,) + tuple(environment_spec.observations.shape), jnp.float32)
    network = FeedForwardNetwork(init=lambda key: module.init(key, dummy), apply=module.apply)
    return DQNNetworks(q_network=network, num_actions=num_actions)
