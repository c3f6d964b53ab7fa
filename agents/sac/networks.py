"""SAC's networks: a tanh-squashed Gaussian policy and twin critics, sized by the config."""

import dataclasses

from acmelike.networks import FeedForwardNetwork
from acmelike.networks.continuous import CriticEnsemble, GaussianPolicy, policy_and_critic
from acmelike.specs import ActionBounds, EnvironmentSpec
from agents.sac.config import SACConfig


@dataclasses.dataclass(frozen=True)
class SACNetworks:
    policy: FeedForwardNetwork  # apply(params, [B, ...] obs) -> ([B, A] mean, [B, A] log std), pre-tanh
    critic: FeedForwardNetwork  # apply(params, [B, ...] obs, [B, A] unit-box actions) -> [2, B] Q-values
    bounds: ActionBounds


def make_networks(environment_spec: EnvironmentSpec, config: SACConfig = SACConfig()) -> SACNetworks:
    """Builds SAC's networks for `environment_spec`; ValueError naming SAC and the spec if it does not fit."""
    policy, critic, bounds = policy_and_critic(
        environment_spec,
        agent="SAC",
        policy=lambda action_size: GaussianPolicy(hidden_sizes=config.policy_hidden_sizes, action_size=action_size),
        critic=CriticEnsemble(hidden_sizes=config.critic_hidden_sizes, num_critics=2),
    )
    return SACNetworks(policy=policy, critic=critic, bounds=bounds)
