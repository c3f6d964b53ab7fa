"""Networks: flax modules and the pure (init, apply) containers agents use."""

from acmelike.networks.base import FeedForwardNetwork
from acmelike.networks.mlp import MLP
from acmelike.networks.recurrent import LSTMState, TorsoLSTMHead, UnrollableNetwork, make_torso_lstm_network
from acmelike.networks.torsos import (
    TORSO_NAMES,
    ImpalaResNetTorso,
    MinAtarTorso,
    NatureDQNTorso,
    check_image_observations,
    make_torso,
)

__all__ = [
    "FeedForwardNetwork",
    "MLP",
    "ImpalaResNetTorso",
    "LSTMState",
    "MinAtarTorso",
    "NatureDQNTorso",
    "TorsoLSTMHead",
    "UnrollableNetwork",
    "check_image_observations",
    "make_torso",
    "make_torso_lstm_network",
    "TORSO_NAMES",
]
