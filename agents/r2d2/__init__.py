"""R2D2: recurrent replay distributed DQN (prioritized sequences, stored LSTM state, burn-in, value rescaling)."""

from acmelike.builders import AgentDefinition
from agents.r2d2.anakin import make_anakin_agent
from agents.r2d2.builder import R2D2Builder
from agents.r2d2.config import R2D2Config
from agents.r2d2.networks import R2D2Networks, make_networks

AGENT = AgentDefinition(
    name="r2d2",
    config_class=R2D2Config,
    make_builder=R2D2Builder,
    make_networks=make_networks,
    action_space="discrete",
    anakin=make_anakin_agent,
    smoke_config=dict(
        burn_in_length=2, trace_length=4, sequence_period=3, batch_size=4, min_replay_size=4, hidden_sizes=(16,),
        lstm_size=16,
    ),
)

__all__ = ["AGENT", "R2D2Builder", "R2D2Config", "R2D2Networks", "make_networks"]
