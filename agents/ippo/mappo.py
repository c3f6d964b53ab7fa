"""MAPPO: IPPO with a centralised critic, the value of each agent computed from the global state."""

from acmelike.builders import AgentDefinition
from agents.ippo import SMOKE_CONFIG, IPPOBuilder, MAPPOConfig, make_anakin_agent, make_networks

AGENT = AgentDefinition(
    name="mappo",
    config_class=MAPPOConfig,
    make_builder=IPPOBuilder,
    make_networks=make_networks,
    action_space="discrete",
    multiagent=True,
    anakin=make_anakin_agent,
    smoke_config=SMOKE_CONFIG,
)
