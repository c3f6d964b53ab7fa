"""BC: behavioural cloning of a dataset's discrete actions (maximum likelihood), learned offline."""

from acmelike.builders import AgentDefinition
from agents.bc.builder import BCBuilder
from agents.bc.config import BCConfig
from agents.bc.networks import BCNetworks, make_networks

AGENT = AgentDefinition(
    name="bc",
    config_class=BCConfig,
    make_builder=BCBuilder,
    make_networks=make_networks,
    action_space="discrete",
    offline=True,
    smoke_config=dict(batch_size=8, num_sgd_steps_per_step=1, hidden_sizes=(16,)),
)

__all__ = ["AGENT", "BCBuilder", "BCConfig", "BCNetworks", "make_networks"]
