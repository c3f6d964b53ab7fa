"""CQL (discrete): conservative Q-learning (Kumar et al., 2020) offline, on DQN's Q-network. The continuous form,
on SAC's networks and learning step, is `agents.cql.continuous` (`--agent cql_continuous`)."""

from acmelike.builders import AgentDefinition
from agents.cql.builder import CQLBuilder
from agents.cql.config import CQLConfig
from agents.dqn.networks import make_networks

AGENT = AgentDefinition(
    name="cql",
    config_class=CQLConfig,
    make_builder=CQLBuilder,
    make_networks=make_networks,
    action_space="discrete",
    offline=True,
    smoke_config=dict(batch_size=8, num_sgd_steps_per_step=1, hidden_sizes=(16,)),
)

__all__ = ["AGENT", "CQLBuilder", "CQLConfig", "make_networks"]
