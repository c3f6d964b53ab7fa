"""The DQN Q-network: an MLP from flat observations, or a conv torso from images, to one Q-value per discrete
action."""

import dataclasses

import flax.linen as nn
import jax.numpy as jnp

from acmelike.networks import MLP, FeedForwardNetwork, make_torso
from acmelike.specs import EnvironmentSpec, flat_observation_size, num_discrete_actions
from agents.dqn.config import DQNConfig


class DuelingHead(nn.Module):
    """Wang et al. (2016): Q(s, a) = V(s) + A(s, a) - mean_a A(s, a), from two linear layers on the torso's
    features. The value takes every transition's gradient whatever the action, so small action gaps are not
    buried under the errors of the state's value. [B, D] -> [B, num_actions]."""

    num_actions: int

    @nn.compact
    def __call__(self, features):
        value = nn.Dense(1, name="value")(features)
        advantages = nn.Dense(self.num_actions, name="advantages")(features)
        return value + advantages - jnp.mean(advantages, axis=-1, keepdims=True)


@dataclasses.dataclass(frozen=True)
class DQNNetworks:
    q_network: FeedForwardNetwork  # apply(params, [B, ...] observations) -> [B, A] Q-values
    num_actions: int


def make_networks(environment_spec: EnvironmentSpec, config: DQNConfig = DQNConfig()) -> DQNNetworks:
    """Builds the Q-network for `environment_spec`: with `config.torso` "mlp" an MLP of `config.hidden_sizes`
    over the flattened observation, else that conv torso (`acmelike.networks.TORSO_NAMES`) and a linear layer;
    with `config.dueling` the last layer is a `DuelingHead` instead.

    Raises ValueError naming DQN and the spec that does not fit (or the torso that does not fit it).
    """
    num_actions = num_discrete_actions(environment_spec, agent="DQN")
    if config.torso == "mlp":
        flat_observation_size(environment_spec, agent="DQN")
        if config.dueling:
            module = nn.Sequential([MLP(layer_sizes=tuple(config.hidden_sizes), activate_final=True),
                                    DuelingHead(num_actions)])
        else:
            module = MLP(layer_sizes=tuple(config.hidden_sizes) + (num_actions,))
    else:
        torso = make_torso(config.torso, environment_spec.observations, agent="DQN")
        head = DuelingHead(num_actions) if config.dueling else nn.Dense(num_actions)
        module = nn.Sequential([torso, head])
    dummy = jnp.zeros((1,) + tuple(environment_spec.observations.shape), jnp.float32)
    network = FeedForwardNetwork(init=lambda key: module.init(key, dummy), apply=module.apply)
    return DQNNetworks(q_network=network, num_actions=num_actions)
