"""Losses: pure functions over rlax, with the shapes and stop-gradients in their docstrings."""

from acmelike import _jax_probability  # noqa: F401  (before rlax: keeps TensorFlow out)

from acmelike.losses.ppo import (
    PPOLossOutput,
    generalized_advantage_estimation,
    ppo_loss,
)
from acmelike.losses.r2d2 import SequenceTDOutput, sequence_priority, transformed_n_step_double_q_loss
from acmelike.losses.value import double_q_td_loss
from acmelike.losses.vtrace import ImpalaLossOutput, impala_loss

__all__ = ["PPOLossOutput", "double_q_td_loss", "generalized_advantage_estimation", "ppo_loss"]
__all__ += [
    "ImpalaLossOutput",
    "SequenceTDOutput",
    "impala_loss",
    "sequence_priority",
    "transformed_n_step_double_q_loss",
]
