"""IPPO: PPO with one actor and one critic shared by all agents (or by each team, `policy_mapping`), each agent
seeing its own observation and a one-hot of its id. MAPPO (`agents.ippo.mappo`) is the same with a centralised
critic on the global state."""

from acmelike.builders import AgentDefinition
from agents.ippo.anakin import make_anakin_agent
from agents.ippo.builder import IPPOBuilder
from agents.ippo.config import IPPOConfig, MAPPOConfig
from agents.ippo.networks import MultiAgentPPONetworks, make_networks

SMOKE_CONFIG = dict(unroll_length=8, batch_size=2, max_queue_size=8, num_minibatches=2, num_epochs=2,
                    hidden_sizes=(16,))

AGENT = AgentDefinition(
    name="ippo",
    config_class=IPPOConfig,
    make_builder=IPPOBuilder,
    make_networks=make_networks,
    action_space="discrete",
    multiagent=True,
    anakin=make_anakin_agent,
    smoke_config=SMOKE_CONFIG,
)

__all__ = ["AGENT", "IPPOBuilder", "IPPOConfig", "MAPPOConfig", "MultiAgentPPONetworks", "make_anakin_agent",
           "make_networks"]
