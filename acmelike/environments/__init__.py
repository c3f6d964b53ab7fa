"""Environments acmelike adds to gymnasium's registry: a memory task in the `acmelike/` namespace, and MinAtar's
pixel games when the `minatar` package is installed.

    import acmelike.environments
    acmelike.environments.register()          # idempotent
    gymnasium.make("acmelike/CartPoleNoVelocity-v1")
    gymnasium.make("MinAtar/Breakout-v1")      # with `pip install minatar`
"""

from acmelike.environments.memory import CARTPOLE_NO_VELOCITY_ID, CartPoleNoVelocity, register_memory_tasks
from acmelike.environments.pixels import register_minatar


def register() -> None:
    """Registers every environment id acmelike provides with gymnasium; calling it again does nothing."""
    register_memory_tasks()
    register_minatar()


__all__ = ["CARTPOLE_NO_VELOCITY_ID", "CartPoleNoVelocity", "register", "register_memory_tasks", "register_minatar"]
