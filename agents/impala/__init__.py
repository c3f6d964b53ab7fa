"""IMPALA: V-trace actor-critic with an LSTM, on sequences from a Reverb queue fed by N actors."""

from acmelike.builders import AgentDefinition
from agents.impala.anakin import make_anakin_agent
from agents.impala.builder import IMPALABuilder
from agents.impala.config import IMPALAConfig
from agents.impala.networks import IMPALANetworks, make_networks

AGENT = AgentDefinition(
    name="impala",
    config_class=IMPALAConfig,
    make_builder=IMPALABuilder,
    make_networks=make_networks,
    action_space="discrete",
    anakin=make_anakin_agent,
    smoke_config=dict(unroll_length=8, batch_size=2, max_queue_size=8, hidden_sizes=(16,), lstm_size=16),
)

__all__ = ["AGENT", "IMPALABuilder", "IMPALAConfig", "IMPALANetworks", "make_networks"]
