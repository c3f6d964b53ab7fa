"""D4PG's networks: a deterministic tanh policy and a categorical distributional critic, sized by the config."""

import dataclasses

import jax
import numpy as np

from acmelike.networks import FeedForwardNetwork
from acmelike.networks.continuous import Critic, DeterministicPolicy, policy_and_critic
from acmelike.specs import ActionBounds, EnvironmentSpec
from agents.d4pg.config import D4PGConfig


@dataclasses.dataclass(frozen=True)
class D4PGNetworks:
    policy: FeedForwardNetwork  # apply(params, [B, ...] obs) -> [B, A] actions in [-1, 1]
    critic: FeedForwardNetwork  # apply(params, [B, ...] obs, [B, A] unit-box actions) -> [B, K] logits
    support: jax.Array  # [K] the atoms' values
    bounds: ActionBounds


def make_networks(environment_spec: EnvironmentSpec, config: D4PGConfig = D4PGConfig()) -> D4PGNetworks:
    """Builds D4PG's networks for `environment_spec`; ValueError naming D4PG and the spec if it does not fit."""
    policy, critic, bounds = policy_and_critic(
        environment_spec,
        agent="D4PG",
        policy=lambda action_size: DeterministicPolicy(hidden_sizes=config.policy_hidden_sizes, action_size=action_size),
        critic=Critic(hidden_sizes=config.critic_hidden_sizes, num_outputs=config.num_atoms),
    )
    support = np.linspace(config.v_min, config.v_max, config.num_atoms, dtype=np.float32)
    return D4PGNetworks(policy=policy, critic=critic, support=support, bounds=bounds)
