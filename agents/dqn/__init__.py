"""DQN: double Q-learning with n-step returns, prioritized replay and a target network."""

from acmelike.builders import AgentDefinition
from agents.dqn.anakin import make_anakin_agent
from agents.dqn.builder import DQNBuilder
from agents.dqn.config import DQNConfig
from agents.dqn.networks import DQNNetworks, make_networks

AGENT = AgentDefinition(
    name="dqn",
    config_class=DQNConfig,
    make_builder=DQNBuilder,
    make_networks=make_networks,
    action_space="discrete",
    anakin=make_anakin_agent,
    smoke_config=dict(min_replay_size=20, batch_size=8, num_sgd_steps_per_step=2, samples_per_insert=4.0,
                      hidden_sizes=(16,)),
)

__all__ = ["AGENT", "DQNBuilder", "DQNConfig", "DQNNetworks", "make_networks"]
