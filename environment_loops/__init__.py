"""Environment loops: run dm_env episodes through an acmelike Actor."""

from environment_loops.environment_loop import EnvironmentLoop, Observer

__all__ = ["EnvironmentLoop", "Observer"]
