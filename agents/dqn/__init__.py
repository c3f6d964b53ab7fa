"""DQN: double Q-learning with n-step returns, prioritized replay and a target network."""

from agents.dqn.config import DQNConfig
from agents.dqn.networks import DQNNetworks, make_networks

__all__ = ["DQNBuilder", "DQNConfig", "DQNNetworks", "make_networks"]


def __getattr__(name):
    # The builder touches Reverb (tables, adders); keep `import agents.dqn` free of it.
    if name == "DQNBuilder":
        from agents.dqn.builder import DQNBuilder

        return DQNBuilder
    raise AttributeError(f"module 'agents.dqn' has no attribute {name!r}")
