"""TD3: twin delayed deep deterministic policy gradient."""

from acmelike.builders import AgentDefinition
from agents.td3.anakin import make_anakin_agent
from agents.td3.builder import TD3Builder
from agents.td3.config import TD3Config
from agents.td3.networks import TD3Networks, make_networks

AGENT = AgentDefinition(
    name="td3",
    config_class=TD3Config,
    make_builder=TD3Builder,
    make_networks=make_networks,
    action_space="continuous",
    anakin=make_anakin_agent,
    smoke_config=dict(min_replay_size=20, batch_size=8, num_sgd_steps_per_step=2, samples_per_insert=8.0,
                      policy_hidden_sizes=(16,), critic_hidden_sizes=(16,)),
)

__all__ = ["AGENT", "TD3Builder", "TD3Config", "TD3Networks", "make_networks"]
