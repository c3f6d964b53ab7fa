"""Losses: pure functions over rlax, with the shapes and stop-gradients in their docstrings."""

from acmelike import _jax_probability  # noqa: F401  (before rlax: keeps TensorFlow out)

from acmelike.losses.ppo import (
    PPOLossOutput,
    generalized_advantage_estimation,
    ppo_loss,
)
from acmelike.losses.value import double_q_td_loss

__all__ = ["PPOLossOutput", "double_q_td_loss", "generalized_advantage_estimation", "ppo_loss"]
