"""PPO: clipped-surrogate policy optimisation with GAE, on sequences from a Reverb queue."""

from agents.ppo.config import PPOConfig
from agents.ppo.networks import PPONetworks, make_networks

__all__ = ["PPOBuilder", "PPOConfig", "PPONetworks", "make_networks"]


def __getattr__(name):
    # The builder touches Reverb (tables, adders); keep `import agents.ppo` free of it.
    if name == "PPOBuilder":
        from agents.ppo.builder import PPOBuilder

        return PPOBuilder
    raise AttributeError(f"module 'agents.ppo' has no attribute {name!r}")
