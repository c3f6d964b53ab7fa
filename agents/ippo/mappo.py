"""MAPPO: IPPO with a centralised critic, the value of each agent computed from the global state."""

from acmelike.builders import AgentDefinition
from agents.ippo import SMOKE_CONFIG, IPPOBuilder, MAPPOConfig, make_networks

AGENT = AgentDefinition(
    name="mappo",
    config_class=MAPPOConfig,
    make_builder=IPPOBuilder,
    make_networks=make_networks,
    action_space="discrete",
    multiagent=True,
    smoke_config=SMOKE_CONFIG,
)
