"""Learner machinery: a pure, jitted update step inside a thin stateful shell."""

from acmelike.learners.sgd_learner import SGDLearner, NonFiniteLossError
from acmelike.learners.steps import scan_update_steps

__all__ = ["NonFiniteLossError", "SGDLearner", "scan_update_steps"]
