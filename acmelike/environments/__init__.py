"""Environments acmelike adds to gymnasium's registry: a memory task in the `acmelike/` namespace, and MinAtar's
pixel games when the `minatar` package is installed; and the DeepMind Control Suite's tasks, native dm_env
environments named `dm_control/<domain>-<task>` (with the `dmc` extra).

    import acmelike.environments
    acmelike.environments.register()          # idempotent
    gymnasium.make("acmelike/CartPoleNoVelocity-v1")
    gymnasium.make("MinAtar/Breakout-v1")      # with `pip install minatar`
    make_control_suite_environment("dm_control/walker-walk", seed=0)   # with `pip install -e '.[dmc]'`
"""

from acmelike.environments.control_suite import (
    CONTROL_SUITE_PREFIX,
    check_control_suite_id,
    load_suite,
    make_control_suite_environment,
    render_frame,
)
from acmelike.environments.memory import CARTPOLE_NO_VELOCITY_ID, CartPoleNoVelocity, register_memory_tasks
from acmelike.environments.pixels import register_minatar


def register() -> None:
    """Registers every environment id acmelike provides with gymnasium; calling it again does nothing."""
    register_memory_tasks()
    register_minatar()


__all__ = ["CARTPOLE_NO_VELOCITY_ID", "CONTROL_SUITE_PREFIX", "CartPoleNoVelocity", "check_control_suite_id",
           "load_suite", "make_control_suite_environment", "register", "register_memory_tasks", "register_minatar",
           "render_frame"]
