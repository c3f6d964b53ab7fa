"""PPO: clipped-surrogate policy optimisation with GAE, on sequences from a Reverb queue."""

from acmelike.builders import AgentDefinition
from agents.ppo.anakin import make_anakin_agent
from agents.ppo.builder import PPOBuilder
from agents.ppo.config import PPOConfig
from agents.ppo.networks import PPONetworks, make_networks

AGENT = AgentDefinition(
    name="ppo",
    config_class=PPOConfig,
    make_builder=PPOBuilder,
    make_networks=make_networks,
    action_space="discrete",
    anakin=make_anakin_agent,
    smoke_config=dict(unroll_length=16, batch_size=2, max_queue_size=8, num_minibatches=2, hidden_sizes=(16,)),
)

__all__ = ["AGENT", "PPOBuilder", "PPOConfig", "PPONetworks", "make_networks"]
