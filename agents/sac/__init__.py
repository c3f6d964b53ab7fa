"""SAC: soft actor-critic with twin critics and an automatically tuned entropy temperature."""

from acmelike.builders import AgentDefinition
from agents.sac.anakin import make_anakin_agent
from agents.sac.builder import SACBuilder
from agents.sac.config import SACConfig
from agents.sac.networks import SACNetworks, make_networks

AGENT = AgentDefinition(
    name="sac",
    config_class=SACConfig,
    make_builder=SACBuilder,
    make_networks=make_networks,
    action_space="continuous",
    anakin=make_anakin_agent,
    smoke_config=dict(min_replay_size=20, batch_size=8, num_sgd_steps_per_step=2, samples_per_insert=8.0,
                      policy_hidden_sizes=(16,), critic_hidden_sizes=(16,)),
)

__all__ = ["AGENT", "SACBuilder", "SACConfig", "SACNetworks", "make_networks"]
