"""The DQN Q-network: an MLP from flat observations, or a conv torso from images, to one Q-value per discrete
action."""

import dataclasses

import flax.linen as nn
import jax.numpy as jnp

from acmelike.networks import MLP, FeedForwardNetwork, make_torso
from acmelike.specs import EnvironmentSpec, flat_observation_size, num_discrete_actions
from agents.dqn.config import DQNConfig


@dataclasses.dataclass(frozen=True)
class DQNNetworks:
    q_network: FeedForwardNetwork  # apply(params, [B, ...] observations) -> [B, A] Q-values
    num_actions: int


def make_networks(environment_spec: EnvironmentSpec, config: DQNConfig = DQNConfig()) -> DQNNetworks:
    """Builds the Q-network for `environment_spec`: with `config.torso` "mlp" an MLP of `config.hidden_sizes`
    over the flattened observation, else that conv torso (`acmelike.networks.TORSO_NAMES`) and a linear layer.

    Raises ValueError naming DQN and the spec that does not fit (or the torso that does not fit it).
    """
    num_actions = num_discrete_actions(environment_spec, agent="DQN")
    if config.torso == "mlp":
        flat_observation_size(environment_spec, agent="DQN")
        module = MLP(layer_sizes=tuple(config.hidden_sizes) + (num_actions,))
    else:
        torso = make_torso(config.torso, environment_spec.observations, agent="DQN")
        module = nn.Sequential([torso, nn.Dense(num_actions)])
    dummy = jnp.zeros((1,) + tuple(environment_spec.observations.shape), jnp.float32)
    network = FeedForwardNetwork(init=lambda key: module.init(key, dummy), apply=module.apply)
    return DQNNetworks(q_network=network, num_actions=num_actions)
