"""TD3's networks: a deterministic tanh policy and twin critics, sized by the config."""

import dataclasses

from acmelike.networks import FeedForwardNetwork
from acmelike.networks.continuous import CriticEnsemble, DeterministicPolicy, policy_and_critic
from acmelike.specs import ActionBounds, EnvironmentSpec
from agents.td3.config import TD3Config


@dataclasses.dataclass(frozen=True)
class TD3Networks:
    policy: FeedForwardNetwork  # apply(params, [B, ...] obs) -> [B, A] actions in [-1, 1]
    critic: FeedForwardNetwork  # apply(params, [B, ...] obs, [B, A] unit-box actions) -> [2, B] Q-values
    bounds: ActionBounds


def make_networks(environment_spec: EnvironmentSpec, config: TD3Config = TD3Config()) -> TD3Networks:
    """Builds TD3's networks for `environment_spec`; ValueError naming TD3 and the spec if it does not fit."""
    policy, critic, bounds = policy_and_critic(
        environment_spec,
        agent="TD3",
        policy=lambda action_size: DeterministicPolicy(hidden_sizes=config.policy_hidden_sizes, action_size=action_size),
        critic=CriticEnsemble(hidden_sizes=config.critic_hidden_sizes, num_critics=2),
    )
    return TD3Networks(policy=policy, critic=critic, bounds=bounds)
