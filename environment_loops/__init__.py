"""The environment loop: runs dm_env episodes through an acmelike Actor (one environment, or B stepped together)."""

from environment_loops.environment_loop import EnvironmentLoop, Observer

__all__ = ["EnvironmentLoop", "Observer"]
