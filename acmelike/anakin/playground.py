"""MuJoCo Playground's DeepMind Control Suite tasks as a `JaxEnvironment`, for the continuous agents' Anakin forms.

    environment = make_playground_environment("playground/CartpoleSwingup")   # or WalkerWalk, CheetahRun, ...

MuJoCo Playground (`pip install -e '.[playground]'`, today's stack) rewrites the Control Suite's tasks in MJX, so
the whole of a SAC, TD3, D4PG or MPO run on cartpole-swingup can be one jitted function, vmapped over seeds; the
`dm_control/<domain>-<task>` ids run the suite's own MuJoCo tasks in the other engines. Playground's tasks share
Brax's `Env` interface, so `acmelike.anakin.brax.from_brax_env` steps them: the task's `done` (Playground's Control
Suite tasks set it only on a non-finite state) ends an episode with discount 0, and the task's own
`episode_length` (1,000 steps, as the suite's) with discount 1.

Two choices here, not Playground's defaults:
- Only the Control Suite tasks are offered. Playground's locomotion and manipulation tasks read robot models from
  the MuJoCo Menagerie, which it clones from GitHub on first use, and a run downloads nothing.
- Physics run on MJX's JAX implementation (`impl="jax"`), which compiles with the rest of the run under XLA on any
  device. Playground's default, MuJoCo Warp, compiles its own kernels (minutes on a CPU) and caches them in the
  home directory.
"""

from typing import Optional

from acmelike.anakin.brax import from_brax_env
from acmelike.anakin.environment import JaxEnvironment, task_of

PLAYGROUND_PREFIX = "playground/"
# MJX's pure-JAX physics: see the module's docstring.
PLAYGROUND_IMPL = "jax"


def check_playground_id(name: str) -> str:
    """The Playground Control Suite task of `name` ("playground/CartpoleSwingup" or "CartpoleSwingup"); ValueError
    naming the missing package if MuJoCo Playground does not import, or listing its tasks if `name` is not one."""
    try:
        from mujoco_playground import dm_control_suite
    except ImportError as error:
        raise ValueError(
            f"Environment {name!r} needs MuJoCo Playground, which is not installed: pip install -e '.[playground]' "
            "(today's stack, Python >= 3.11)."
        ) from error
    return task_of(name, PLAYGROUND_PREFIX, sorted(dm_control_suite.ALL_ENVS), "MuJoCo Playground Control Suite task",
                   " (Playground's locomotion and manipulation tasks download robot models, and are not offered).")


def make_playground_environment(name: str, episode_length: Optional[int] = None) -> JaxEnvironment:
    """Makes Playground Control Suite task `name` (`check_playground_id`'s names and errors) on MJX's JAX physics,
    its episodes cut after `episode_length` steps (None: the task's config's, 1,000)."""
    short = check_playground_id(name)
    if episode_length is not None and episode_length < 1:
        raise ValueError(f"make_playground_environment: episode_length must be >= 1, got {episode_length}.")
    from mujoco_playground import dm_control_suite  # importable: checked above

    config = dm_control_suite.get_default_config(short)
    config.impl = PLAYGROUND_IMPL
    env = dm_control_suite.load(short, config=config)
    # The raw task never ends an episode on time; Playground's training wrapper cuts it after episode_length
    # control steps, as the adapter's clock does here.
    return from_brax_env(env, PLAYGROUND_PREFIX + short,
                         int(config.episode_length) if episode_length is None else episode_length)
