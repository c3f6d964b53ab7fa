"""Losses: pure functions over rlax, with the shapes and stop-gradients in their docstrings."""

from acmelike import _jax_probability  # noqa: F401  (before rlax: keeps TensorFlow out)

from acmelike.losses.actor_critic import (
    clipped_double_q_target,
    critic_regression_loss,
    deterministic_policy_gradient_loss,
    sac_actor_loss,
    sac_temperature_loss,
)
from acmelike.losses.distributional import (
    categorical_mean,
    categorical_projection,
    categorical_td_loss,
    mixture_logits,
)
from acmelike.losses.mpo import (
    MPODualParams,
    MPOLossOutput,
    dual_value,
    e_step_weights,
    gaussian_kl,
    gaussian_log_prob,
    init_dual_params,
    kl_constraint_dual_loss,
    mpo_loss,
    nonparametric_kl,
    project_dual_params,
    temperature_dual_loss,
    weighted_log_likelihood_loss,
)
from acmelike.losses.ppo import (
    PPOLossOutput,
    generalized_advantage_estimation,
    ppo_loss,
)
from acmelike.losses.r2d2 import SequenceTDOutput, sequence_priority, transformed_n_step_double_q_loss
from acmelike.losses.value import double_q_td_loss
from acmelike.losses.vtrace import ImpalaLossOutput, impala_loss

__all__ = [
    "ImpalaLossOutput",
    "MPODualParams",
    "MPOLossOutput",
    "PPOLossOutput",
    "SequenceTDOutput",
    "categorical_mean",
    "categorical_projection",
    "categorical_td_loss",
    "clipped_double_q_target",
    "critic_regression_loss",
    "deterministic_policy_gradient_loss",
    "double_q_td_loss",
    "dual_value",
    "e_step_weights",
    "gaussian_kl",
    "gaussian_log_prob",
    "generalized_advantage_estimation",
    "impala_loss",
    "init_dual_params",
    "kl_constraint_dual_loss",
    "mixture_logits",
    "mpo_loss",
    "nonparametric_kl",
    "ppo_loss",
    "project_dual_params",
    "sac_actor_loss",
    "sac_temperature_loss",
    "sequence_priority",
    "temperature_dual_loss",
    "transformed_n_step_double_q_loss",
    "weighted_log_likelihood_loss",
]
