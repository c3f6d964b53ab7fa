"""JaxEnvironment: a gymnax environment as pure reset/step functions with dm_env's step semantics.

gymnax's own `step` resets inside the step and returns the *next* episode's first observation, losing the last
observation of the episode, and gives discount 0 on time-limit truncation. Anakin runners need what
`acmelike.wrappers.gymnasium_adapter` gives the other runners:

    step -> terminated                  last, discount 0
    step -> truncated (time limit only) last, discount 1 (bootstrap from the last observation)
    step -> neither                     discount 1

so `step` here never resets: it returns the real next observation and the caller decides when to `reset`.
All functions take one environment (no batch axis); runners `vmap` them.
"""

import contextlib
import dataclasses
import warnings
from typing import Any, Callable, Iterator, NamedTuple, Sequence, Tuple

import jax
import jax.numpy as jnp
import numpy as np
from dm_env import specs

from acmelike.specs import EnvironmentSpec

GYMNAX_PREFIX = "gymnax/"


class JaxTimeStep(NamedTuple):
    """What one environment step gives: the observation after the action, and the action's outcome."""

    observation: jax.Array  # float32
    reward: jax.Array  # float32 []
    discount: jax.Array  # float32 []: 0 on termination, 1 otherwise (truncation included)
    last: jax.Array  # bool []: the episode ended with this step (terminated or truncated)


@dataclasses.dataclass(frozen=True)
class JaxEnvironment:
    """Pure functions of one environment; `state` is the environment's own pytree.

    reset(key) -> (state, observation)
    step(key, state, action) -> (state, JaxTimeStep)     after `last`, call `reset` before stepping again
    """

    name: str
    spec: EnvironmentSpec
    reset: Callable[[jax.Array], Tuple[Any, jax.Array]]
    step: Callable[[jax.Array, Any, jax.Array], Tuple[Any, JaxTimeStep]]


def select_envs(condition: jax.Array, x, y):
    """Per environment, `x` where `condition` ([B] bool) else `y`: pytrees with leading axis B."""
    return jax.tree_util.tree_map(
        lambda a, b: jnp.where(jnp.reshape(condition, condition.shape + (1,) * (a.ndim - 1)), a, b), x, y
    )


def spec_from_space(space, name: str):
    """A dm_env spec for a gymnax (or JaxMARL) Discrete or Box space (observations as float32)."""
    if hasattr(space, "n") and not hasattr(space, "low"):
        return specs.DiscreteArray(num_values=int(space.n), dtype=np.int32, name=name)
    shape = tuple(space.shape)
    low = np.broadcast_to(np.asarray(space.low, np.float32), shape)
    high = np.broadcast_to(np.asarray(space.high, np.float32), shape)
    return specs.BoundedArray(shape=shape, dtype=np.float32, minimum=low, maximum=high, name=name)


def task_of(name: str, prefix: str, tasks: Sequence[str], kind: str, note: str = "") -> str:
    """The task `name` names, with or without `prefix` (a JAX family's id: gymnax/, jaxmarl/, brax/, playground/);
    ValueError listing `tasks` in their order (and `note`) if it is none of them."""
    short = name[len(prefix):] if name.startswith(prefix) else name
    if short not in tasks:
        raise ValueError(f"Unknown {kind} {short!r}. Choose one of: "
                         + ", ".join(prefix + task for task in tasks) + note)
    return short


@contextlib.contextmanager
def _gymnax_bool_writes() -> Iterator[None]:
    """gymnax 0.0.9's MinAtar games write ints and floats into their bool observation (`obs.at[...].set(1)`,
    Breakout's brick map), and JAX warns on each such write (a FutureWarning, at every trace) that it will be an
    error one day. The cast is exact (0 and 1 to False and True), so that one warning is silenced here, around
    gymnax's own code only: any of ours still warns."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "scatter inputs have incompatible types: .* to dtype=bool", FutureWarning)
        yield


def make_gymnax_environment(name: str) -> JaxEnvironment:
    """Makes gymnax environment `name` ("CartPole-v1" or "gymnax/CartPole-v1") with its default parameters.

    Raises ValueError listing gymnax's environments if `name` is not one of them, or naming the missing package.
    """
    try:
        import gymnax
    except ImportError as error:
        raise ValueError(
            f"Environment {name!r} needs gymnax, which is not installed: pip install gymnax==0.0.9"
        ) from error
    short = task_of(name, GYMNAX_PREFIX, gymnax.registered_envs, "gymnax environment")
    env, params = gymnax.make(short)
    # The same environment without its time limit tells termination from truncation: an episode that is done
    # under `params` but not under `unlimited` was cut by the clock (gymnax's EnvParams all carry this field).
    unlimited = params.replace(max_steps_in_episode=np.iinfo(np.int32).max)

    def reset(key):
        with _gymnax_bool_writes():
            observation, state = env.reset_env(key, params)
        return state, observation.astype(jnp.float32)

    def step(key, state, action):
        with _gymnax_bool_writes():
            observation, state, reward, done, _ = env.step_env(key, state, action, params)
        terminated = jnp.logical_and(done, env.is_terminal(state, unlimited))
        timestep = JaxTimeStep(
            observation=observation.astype(jnp.float32),
            reward=jnp.asarray(reward, jnp.float32),
            discount=1.0 - terminated.astype(jnp.float32),
            last=jnp.asarray(done, bool),
        )
        return state, timestep

    spec = EnvironmentSpec(
        observations=spec_from_space(env.observation_space(params), "observation"),
        actions=spec_from_space(env.action_space(params), "action"),
        rewards=specs.Array(shape=(), dtype=np.float32, name="reward"),
        discounts=specs.BoundedArray(shape=(), dtype=np.float32, minimum=0.0, maximum=1.0, name="discount"),
    )
    return JaxEnvironment(name=GYMNAX_PREFIX + short, spec=spec, reset=reset, step=step)
