"""R2D2 networks: a torso (MLP, Nature-DQN or IMPALA ResNet), an LSTM, then one Q-value per action."""

import dataclasses

import flax.linen as nn

from acmelike.networks import UnrollableNetwork, make_torso, make_torso_lstm_network
from acmelike.specs import EnvironmentSpec, num_discrete_actions
from agents.r2d2.config import R2D2Config


@dataclasses.dataclass(frozen=True)
class R2D2Networks:
    network: UnrollableNetwork  # outputs Q-values [.., A]
    num_actions: int


def make_networks(environment_spec: EnvironmentSpec, config: R2D2Config = R2D2Config()) -> R2D2Networks:
    """Builds R2D2's network (sizes from `config`); raises ValueError naming R2D2, the torso and the spec when they
    do not fit each other."""
    num_actions = num_discrete_actions(environment_spec, agent="R2D2")
    observations = environment_spec.observations
    torso = make_torso(config.torso, observations, agent="R2D2", hidden_sizes=config.hidden_sizes)
    network = make_torso_lstm_network(
        torso, config.lstm_size, nn.Dense(num_actions), observations.shape, observations.dtype
    )
    return R2D2Networks(network=network, num_actions=num_actions)
