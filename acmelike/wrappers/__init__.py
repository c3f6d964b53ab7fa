"""dm_env wrappers: the gymnasium adapter, single precision, step limit.

    environment = make_gymnasium_environment("CartPole-v1", seed=0)   # gymnasium -> dm_env -> float32
    environment = StepLimitWrapper(environment, step_limit=200)
"""

from acmelike.wrappers.base import EnvironmentWrapper
from acmelike.wrappers.gymnasium_adapter import GymnasiumToDmEnv, check_gymnasium_id, make_gymnasium_environment
from acmelike.wrappers.single_precision import SinglePrecisionWrapper
from acmelike.wrappers.step_limit import StepLimitWrapper

__all__ = [
    "EnvironmentWrapper",
    "GymnasiumToDmEnv",
    "SinglePrecisionWrapper",
    "StepLimitWrapper",
    "check_gymnasium_id",
    "make_gymnasium_environment",
]
