"""Brax's locomotion tasks as a `JaxEnvironment`, for the continuous agents' Anakin forms (SAC, TD3, D4PG, MPO).

    environment = make_brax_environment("brax/inverted_pendulum")    # or brax/hopper, brax/halfcheetah, ...

Brax's own `Env` has no clock: `brax.envs.create` wraps it in an `EpisodeWrapper` (1,000 steps) and an
`AutoResetWrapper`, which, as gymnax's `step` does, replaces an episode's last observation with the next one's
first and cannot tell termination from truncation. Here the bare environment (brax's default pipeline for the
task) is stepped, and the adapter keeps the step count itself, to give `acmelike.anakin.environment`'s semantics:

    the task's `done` (the pendulum fell, the hopper is unhealthy)   last, discount 0
    `episode_length` steps without it (truncation)                   last, discount 1
    neither                                                          discount 1

Actions are brax's, a Box [-1, 1]^action_size (each task scales them to its actuators); observations are unbounded
float32 vectors. Brax is deterministic: `step` ignores its key. The task's XML ships inside the brax package, so
nothing is downloaded. `brax` needs today's stack (`pip install -e '.[brax]'`: jax >= 0.4.x, mujoco-mjx
matching the pinned mujoco); without it `make_brax_environment` raises ValueError saying so.
"""

import warnings
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from dm_env import specs

from acmelike.anakin.environment import JaxEnvironment, JaxTimeStep, task_of
from acmelike.specs import EnvironmentSpec

BRAX_PREFIX = "brax/"
# Brax's (and gymnasium's MuJoCo tasks') episode length: `brax.envs.create`'s default.
BRAX_EPISODE_LENGTH = 1000


class BraxState(NamedTuple):
    """Brax's own state and the steps taken in its episode (for the time limit)."""

    state: Any  # brax.envs.State
    steps: jax.Array  # int32 []


def check_brax_id(name: str) -> str:
    """The brax task of `name` ("brax/inverted_pendulum" or "inverted_pendulum"); ValueError naming the missing
    package if brax does not import, or listing brax's tasks if `name` is not one."""
    try:
        from brax import envs
    except ImportError as error:
        raise ValueError(
            f"Environment {name!r} needs brax, which is not installed: pip install -e '.[brax]' "
            "(today's stack, Python >= 3.11)."
        ) from error
    # brax's registry (`register_environment` adds to it); it has no public listing.
    return task_of(name, BRAX_PREFIX, sorted(envs._envs), "brax task")


def make_brax_environment(name: str, episode_length: int = BRAX_EPISODE_LENGTH) -> JaxEnvironment:
    """Makes brax task `name` (`check_brax_id`'s names and errors) on brax's default pipeline, its episodes cut
    after `episode_length` steps."""
    short = check_brax_id(name)
    if episode_length < 1:
        raise ValueError(f"make_brax_environment: episode_length must be >= 1, got {episode_length}.")
    from brax import envs  # importable: checked above

    with warnings.catch_warnings():
        # Brax's loader warns on every environment that its own pipelines are no longer maintained (MJX is); the
        # tasks and their pipelines are what this adapter runs, on purpose.
        warnings.filterwarnings("ignore", message="Brax System, piplines and environments", category=UserWarning)
        env = envs.get_environment(short)
    return from_brax_env(env, BRAX_PREFIX + short, episode_length)


def from_brax_env(env: Any, name: str, episode_length: int) -> JaxEnvironment:
    """A `JaxEnvironment` named `name` stepping `env`, an object with Brax's `Env` interface (`reset(key)`,
    `step(state, action)`, an int `observation_size` and `action_size`, a state with `obs`, `reward`, `done`):
    brax's tasks, and MuJoCo Playground's `MjxEnv` (`acmelike.anakin.playground`). Its episodes end at `env`'s
    `done` (discount 0) or after `episode_length` steps (discount 1)."""
    if not isinstance(env.observation_size, int):
        raise ValueError(f"{name}'s observations are {env.observation_size}, not one vector: the fully jitted "
                         "continuous agents take one vector of state features.")

    def canonical(state):
        # Some tasks return Python floats (inverted_pendulum's reward 1.0): fix every leaf's dtype to reset's, so
        # the state is one type across steps and resets (scan carries, `select_envs`).
        return jax.tree_util.tree_map(lambda x: jnp.asarray(x, jnp.result_type(x)), state)

    def reset(key):
        state = canonical(env.reset(key))
        return BraxState(state, jnp.zeros((), jnp.int32)), state.obs.astype(jnp.float32)

    def step(key, state, action):
        del key  # the dynamics are deterministic; a task that randomises keeps its own key in its state
        inner = canonical(env.step(state.state, action))
        steps = state.steps + 1
        terminated = inner.done > 0.5
        timestep = JaxTimeStep(
            observation=inner.obs.astype(jnp.float32),
            reward=jnp.asarray(inner.reward, jnp.float32),
            discount=1.0 - terminated.astype(jnp.float32),
            last=jnp.logical_or(terminated, steps >= episode_length),
        )
        return BraxState(inner, steps), timestep

    spec = EnvironmentSpec(
        observations=specs.Array(shape=(env.observation_size,), dtype=np.float32, name="observation"),
        actions=specs.BoundedArray(shape=(env.action_size,), dtype=np.float32, minimum=-1.0, maximum=1.0,
                                   name="action"),
        rewards=specs.Array(shape=(), dtype=np.float32, name="reward"),
        discounts=specs.BoundedArray(shape=(), dtype=np.float32, minimum=0.0, maximum=1.0, name="discount"),
    )
    return JaxEnvironment(name=name, spec=spec, reset=reset, step=step)
