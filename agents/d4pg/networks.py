"""D4PG's networks: a deterministic tanh policy (its last layer initialised near zero, as Acme's) and a categorical
distributional critic, sized by the config."""

import dataclasses

import jax
import numpy as np

from acmelike.networks import FeedForwardNetwork
from acmelike.networks.continuous import NEAR_ZERO, Critic, DeterministicPolicy, policy_and_critic
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
        # The last layer starts near zero, as Acme's D4PG's: with LeCun's, 12 of 60 fully jitted Pendulum seeds
        # ended below -250, most with the policy stuck at the action bounds; near zero, 2 of the same 60 did
        # (agents/d4pg/README.md).
        policy=lambda action_size: DeterministicPolicy(hidden_sizes=config.policy_hidden_sizes, action_size=action_size,
                                                       final_kernel_init=NEAR_ZERO),
        critic=Critic(hidden_sizes=config.critic_hidden_sizes, num_outputs=config.num_atoms),
    )
    support = np.linspace(config.v_min, config.v_max, config.num_atoms, dtype=np.float32)
    return D4PGNetworks(policy=policy, critic=critic, support=support, bounds=bounds)
