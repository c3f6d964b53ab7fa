"""IMPALA networks: a torso (MLP, Nature-DQN or IMPALA ResNet), an LSTM, then policy logits and a value."""

import dataclasses

import flax.linen as nn
import jax

from acmelike.networks import UnrollableNetwork, make_torso, make_torso_lstm_network
from acmelike.specs import EnvironmentSpec, num_discrete_actions
from agents.impala.config import IMPALAConfig


class _PolicyValueHead(nn.Module):
    num_actions: int

    @nn.compact
    def __call__(self, core_outputs: jax.Array):
        logits = nn.Dense(self.num_actions, kernel_init=nn.initializers.orthogonal(0.01))(core_outputs)
        values = nn.Dense(1)(core_outputs)
        return logits, values[..., 0]


@dataclasses.dataclass(frozen=True)
class IMPALANetworks:
    network: UnrollableNetwork  # outputs (logits [.., A], values [..])
    num_actions: int


def make_networks(environment_spec: EnvironmentSpec, config: IMPALAConfig = IMPALAConfig()) -> IMPALANetworks:
    """Builds IMPALA's network (sizes from `config`); raises ValueError naming IMPALA, the torso and the spec when
    they do not fit each other."""
    num_actions = num_discrete_actions(environment_spec, agent="IMPALA")
    observations = environment_spec.observations
    torso = make_torso(config.torso, observations, agent="IMPALA", hidden_sizes=config.hidden_sizes)
    network = make_torso_lstm_network(
        torso, config.lstm_size, _PolicyValueHead(num_actions), observations.shape, observations.dtype
    )
    return IMPALANetworks(network=network, num_actions=num_actions)
