"""MPO: maximum a posteriori policy optimisation, a Gaussian policy improved by sampled-action E-steps and
KL-constrained M-steps (decoupled mean and stddev constraints), with an expected-SARSA critic."""

from acmelike.builders import AgentDefinition
from agents.mpo.anakin import make_anakin_agent
from agents.mpo.builder import MPOBuilder
from agents.mpo.config import MPOConfig
from agents.mpo.networks import MPONetworks, make_networks

AGENT = AgentDefinition(
    name="mpo",
    config_class=MPOConfig,
    make_builder=MPOBuilder,
    make_networks=make_networks,
    action_space="continuous",
    anakin=make_anakin_agent,
    smoke_config=dict(min_replay_size=20, batch_size=8, num_sgd_steps_per_step=2, samples_per_insert=8.0,
                      num_samples=4, policy_hidden_sizes=(16,), critic_hidden_sizes=(16,)),
)

__all__ = ["AGENT", "MPOBuilder", "MPOConfig", "MPONetworks", "make_networks"]
