"""Environment loops: run dm_env episodes through an acmelike Actor (one environment, or B stepped together)."""

from environment_loops.batched_loop import BatchedEnvironmentLoop, make_environment_loop
from environment_loops.environment_loop import EnvironmentLoop, Observer

__all__ = ["BatchedEnvironmentLoop", "EnvironmentLoop", "Observer", "make_environment_loop"]
