"""Environments acmelike adds to gymnasium's registry: memory tasks (and their ids in the `acmelike/` namespace).

    import acmelike.environments
    acmelike.environments.register()          # idempotent
    gymnasium.make("acmelike/CartPoleNoVelocity-v1")
"""

from acmelike.environments.memory import CARTPOLE_NO_VELOCITY_ID, CartPoleNoVelocity, register

__all__ = ["CARTPOLE_NO_VELOCITY_ID", "CartPoleNoVelocity", "register"]
