"""Learner machinery: a pure, jitted update step inside a thin stateful shell."""

from acmelike.learners.learning_parts import LearningParts
from acmelike.learners.sgd_learner import NonFiniteLossError, SGDLearner, guard_non_finite
from acmelike.learners.steps import scan_update_steps

__all__ = ["LearningParts", "NonFiniteLossError", "SGDLearner", "guard_non_finite", "scan_update_steps"]
