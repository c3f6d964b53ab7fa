"""Networks: flax modules and the pure (init, apply) containers agents use."""

from acmelike.networks.base import FeedForwardNetwork
from acmelike.networks.mlp import MLP

__all__ = ["FeedForwardNetwork", "MLP"]
