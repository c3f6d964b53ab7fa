"""D4PG: distributed distributional deterministic policy gradient."""

from acmelike.builders import AgentDefinition
from agents.d4pg.anakin import make_anakin_agent
from agents.d4pg.builder import D4PGBuilder
from agents.d4pg.config import D4PGConfig
from agents.d4pg.networks import D4PGNetworks, make_networks

AGENT = AgentDefinition(
    name="d4pg",
    config_class=D4PGConfig,
    make_builder=D4PGBuilder,
    make_networks=make_networks,
    action_space="continuous",
    anakin=make_anakin_agent,
    smoke_config=dict(min_replay_size=20, batch_size=8, num_sgd_steps_per_step=2, samples_per_insert=8.0,
                      policy_hidden_sizes=(16,), critic_hidden_sizes=(16,), num_atoms=11, priority_exponent=0.6),
)

__all__ = ["AGENT", "D4PGBuilder", "D4PGConfig", "D4PGNetworks", "make_networks"]
