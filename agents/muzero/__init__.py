"""MuZero: a learned model (representation, dynamics, prediction) searched by Gumbel MuZero (`mctx`) to act, and
trained on prioritized replay sequences by unrolling it K steps against search policies, n-step values and rewards."""

from acmelike.builders import AgentDefinition
from agents.muzero.anakin import make_anakin_agent
from agents.muzero.builder import MuZeroBuilder
from agents.muzero.config import MuZeroConfig
from agents.muzero.networks import MuZeroNetworks, make_networks

AGENT = AgentDefinition(
    name="muzero",
    config_class=MuZeroConfig,
    make_builder=MuZeroBuilder,
    make_networks=make_networks,
    action_space="discrete",
    anakin=make_anakin_agent,
    smoke_config=dict(
        num_simulations=4, num_unroll_steps=2, n_step=2, batch_size=4, min_replay_size=4, embedding_size=8,
        hidden_sizes=(16,), num_bins=11,
        samples_per_insert=1.0,  # one SGD step per 4 environment steps (the default, 32, would be eight per step)
    ),
)

__all__ = ["AGENT", "MuZeroBuilder", "MuZeroConfig", "MuZeroNetworks", "make_networks"]
