"""dm_env wrappers: the gymnasium adapter (single and vectorised), single precision, step limit, concatenation,
action repeat.

    environment = make_gymnasium_environment("CartPole-v1", seed=0)   # gymnasium -> dm_env -> float32
    environment = StepLimitWrapper(environment, step_limit=200)
    vector = make_vector_environment("CartPole-v1", num_envs=8, seed=0)  # batched timesteps, arrays [8, ...]
    environment = ConcatObservationWrapper(suite.load("cartpole", "swingup"))  # a dict -> one float32 vector
    environment = ActionRepeatWrapper(environment, repeats=8)  # each action held for 8 environment steps
"""

from acmelike.wrappers.action_repeat import ActionRepeatWrapper, is_repeat_count, repeat_actions
from acmelike.wrappers.base import EnvironmentWrapper
from acmelike.wrappers.concatenate import ConcatObservationWrapper, concatenate_state_nest, is_state_nest
from acmelike.wrappers.gymnasium_adapter import (
    GymnasiumToDmEnv,
    check_environment_id_from_file,
    check_gymnasium_id,
    make_gymnasium_environment,
)
from acmelike.wrappers.single_precision import SinglePrecisionWrapper
from acmelike.wrappers.step_limit import StepLimitWrapper
from acmelike.wrappers.vector import BatchedEnvironments, VectorEnvironment, make_vector_environment

__all__ = [
    "ActionRepeatWrapper",
    "BatchedEnvironments",
    "ConcatObservationWrapper",
    "EnvironmentWrapper",
    "GymnasiumToDmEnv",
    "SinglePrecisionWrapper",
    "StepLimitWrapper",
    "VectorEnvironment",
    "check_environment_id_from_file",
    "check_gymnasium_id",
    "concatenate_state_nest",
    "is_repeat_count",
    "is_state_nest",
    "make_gymnasium_environment",
    "make_vector_environment",
    "repeat_actions",
]
