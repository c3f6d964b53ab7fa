"""VectorEnvironment: a gymnasium vector environment seen as B dm_env environments stepped together.

Every timestep holds arrays with a leading batch axis [B]: `step_type` (dm_env.StepType values, int8), `reward`
and `discount` (float32) and `observation` ([B, ...], float32 where gymnasium has float64). Each sub-environment
follows the dm_env episode protocol on its own:

    gymnasium (autoreset NEXT_STEP)                     sub-environment i's timestep
    reset(seed)                                         FIRST   reward 0, discount 1
    step: terminated_i                                  LAST    discount 0   (the final observation is o_i)
    step: truncated_i only                              LAST    discount 1   (bootstrapping from o_i stays valid)
    step: neither                                       MID     discount 1
    step after sub-env i's LAST (its action ignored)    FIRST   reward 0, discount 1: i's next episode

This is gymnasium 1.x's default NEXT_STEP autoreset: a finished sub-environment spends one vector step resetting,
so its final observation arrives in the LAST timestep itself (never only in `info`) and no transition crosses an
episode boundary. An actor discards the action it chose for a LAST sub-environment; the timestep after it is a
FIRST. Other autoreset modes are refused with a ValueError.

Specs are those of ONE sub-environment (what networks and replay signatures need); `num_envs` is B.
"""

from typing import Optional

import dm_env
import gymnasium
import numpy as np
from dm_env import specs
from gymnasium import spaces
from gymnasium.vector import AutoresetMode

from acmelike.wrappers.gymnasium_adapter import space_to_spec, check_gymnasium_id
from acmelike.wrappers.single_precision import single_precision_spec

FIRST, MID, LAST = (np.int8(t) for t in (dm_env.StepType.FIRST, dm_env.StepType.MID, dm_env.StepType.LAST))


class VectorEnvironment(dm_env.Environment):
    """Adapts a `gymnasium.vector.VectorEnv` (autoreset NEXT_STEP) to batched dm_env timesteps; see module docstring.

    Args:
      env: the vector environment, e.g. from `gymnasium.make_vec` or `gymnasium.vector.SyncVectorEnv`.
      seed: passed to `env.reset(seed=seed)` on the first reset only (gymnasium seeds sub-environment i with
        `seed + i` in SyncVectorEnv); later episodes continue those RNGs. None leaves the env unseeded.

    Observations, rewards and discounts are single precision (float32/int32), as `make_gymnasium_environment`'s.
    """

    def __init__(self, env: gymnasium.vector.VectorEnv, seed: Optional[int] = None):
        mode = env.metadata.get("autoreset_mode", AutoresetMode.NEXT_STEP)
        if AutoresetMode(mode) is not AutoresetMode.NEXT_STEP:
            raise ValueError(
                f"VectorEnvironment needs a vector environment with autoreset_mode NEXT_STEP (gymnasium's default), "
                f"but {env!r} uses {mode}. Build it with gymnasium.vector.SyncVectorEnv(..., autoreset_mode="
                f"AutoresetMode.NEXT_STEP) or make_vector_environment(), which does."
            )
        self._env = env
        self._seed = seed
        self._seeded = False
        self.num_envs = int(env.num_envs)
        self._observation_spec = single_precision_spec(space_to_spec(env.single_observation_space, "observation", "observation"))
        gym_action_spec = space_to_spec(env.single_action_space, "action", "action")
        self._action_spec = single_precision_spec(gym_action_spec)
        self._gym_action_dtype = gym_action_spec.dtype
        self._action_start = (
            int(env.single_action_space.start) if isinstance(env.single_action_space, spaces.Discrete) else 0
        )
        self._observation_dtype = self._observation_spec.dtype
        self._reward_spec = specs.Array(shape=(), dtype=np.float32, name="reward")
        self._discount_spec = specs.BoundedArray(shape=(), dtype=np.float32, minimum=0.0, maximum=1.0, name="discount")
        self._done = np.zeros(self.num_envs, dtype=bool)  # sub-environments whose next step is their reset

    @property
    def gymnasium_env(self) -> gymnasium.vector.VectorEnv:
        return self._env

    def _observation(self, observation) -> np.ndarray:
        return np.asarray(observation, dtype=self._observation_dtype)

    def reset(self) -> dm_env.TimeStep:
        """Resets every sub-environment: all FIRST."""
        if self._seeded:
            observation, _ = self._env.reset()
        else:
            observation, _ = self._env.reset(seed=self._seed)
            self._seeded = True
        self._done[:] = False
        batch = self.num_envs
        return dm_env.TimeStep(
            step_type=np.full(batch, FIRST),
            reward=np.zeros(batch, np.float32),
            discount=np.ones(batch, np.float32),
            observation=self._observation(observation),
        )

    def step(self, action) -> dm_env.TimeStep:
        """Steps every sub-environment with `action` [B, ...]; see the module docstring for the step types."""
        action = np.asarray(action)
        if action.shape[:1] != (self.num_envs,):
            raise ValueError(
                f"VectorEnvironment.step expects one action per sub-environment, shape ({self.num_envs}, ...) "
                f"matching {self._action_spec!r}; received shape {action.shape}."
            )
        if self._action_start:
            action = action + self._action_start
        observation, reward, terminated, truncated, _ = self._env.step(action.astype(self._gym_action_dtype, copy=False))
        starting = self._done
        step_type = np.where(starting, FIRST, np.where(terminated | truncated, LAST, MID)).astype(np.int8)
        discount = np.where(terminated & ~starting, np.float32(0.0), np.float32(1.0)).astype(np.float32)
        reward = np.where(starting, np.float32(0.0), np.asarray(reward, np.float32)).astype(np.float32)
        self._done = (step_type == LAST)
        return dm_env.TimeStep(step_type=step_type, reward=reward, discount=discount, observation=self._observation(observation))

    def observation_spec(self):
        return self._observation_spec

    def action_spec(self):
        return self._action_spec

    def reward_spec(self):
        return self._reward_spec

    def discount_spec(self):
        return self._discount_spec

    def close(self) -> None:
        self._env.close()


def make_vector_environment(
    name: str, num_envs: int, seed: Optional[int], *, numpy_vectorised: bool = True, **make_kwargs
) -> VectorEnvironment:
    """B sub-environments of gymnasium's `name` stepped together, as a `VectorEnvironment`.

    With `numpy_vectorised` (default) and an id that has a numpy-vectorised implementation (gymnasium's
    `vector_entry_point`, e.g. CartPole-v1: one array operation steps all B), that is used; otherwise, or when
    `numpy_vectorised=False`, a `SyncVectorEnv` of B `gymnasium.make(name)` copies, sub-environment i seeded
    `seed + i` (the same episodes as B single environments seeded `seed + i`). `make_kwargs` go to
    `gymnasium.make`/`make_vec` (e.g. `max_episode_steps`).
    """
    if not isinstance(num_envs, int) or num_envs < 1:
        raise ValueError(f"num_envs must be a positive int, got {num_envs!r}.")
    check_gymnasium_id(name)
    spec = gymnasium.spec(name) if ":" not in name else None
    if numpy_vectorised and spec is not None and spec.vector_entry_point is not None:
        env = gymnasium.make_vec(name, num_envs=num_envs, vectorization_mode="vector_entry_point", **make_kwargs)
        mode = env.metadata.get("autoreset_mode", AutoresetMode.NEXT_STEP)
        if AutoresetMode(mode) is AutoresetMode.NEXT_STEP:
            return VectorEnvironment(env, seed=seed)
        env.close()  # another autoreset mode: fall back to stepping gymnasium.make copies
    env = gymnasium.vector.SyncVectorEnv(
        [lambda: gymnasium.make(name, **make_kwargs) for _ in range(num_envs)],
        autoreset_mode=AutoresetMode.NEXT_STEP,
    )
    return VectorEnvironment(env, seed=seed)


class BatchedEnvironments(dm_env.Environment):
    """B dm_env environments stepped one after another, with `VectorEnvironment`'s batched timesteps and step types.

    For environments with no gymnasium vector implementation (e.g. a dm_env of your own): after sub-environment
    i's LAST, the next `step` resets it (its action ignored) and gives its FIRST, as NEXT_STEP autoreset does.
    Observations are stacked (a nest of arrays, each [B, ...]); rewards and discounts as float32 [B].
    """

    def __init__(self, environments):
        if not environments:
            raise ValueError("BatchedEnvironments needs at least one environment.")
        self._environments = list(environments)
        self.num_envs = len(self._environments)
        self._done = np.zeros(self.num_envs, dtype=bool)

    def _stack(self, timesteps) -> dm_env.TimeStep:
        import jax  # only for stacking nested observations

        return dm_env.TimeStep(
            step_type=np.array([np.int8(t.step_type) for t in timesteps], np.int8),
            reward=np.array([0.0 if t.first() else t.reward for t in timesteps], np.float32),
            discount=np.array([1.0 if t.first() else t.discount for t in timesteps], np.float32),
            observation=jax.tree_util.tree_map(lambda *o: np.stack(o), *[t.observation for t in timesteps]),
        )

    def reset(self) -> dm_env.TimeStep:
        self._done[:] = False
        return self._stack([environment.reset() for environment in self._environments])

    def step(self, action) -> dm_env.TimeStep:
        timesteps = [
            environment.reset() if done else environment.step(a)
            for environment, done, a in zip(self._environments, self._done, action)
        ]
        self._done = np.array([t.last() for t in timesteps])
        return self._stack(timesteps)

    def observation_spec(self):
        return self._environments[0].observation_spec()

    def action_spec(self):
        return self._environments[0].action_spec()

    def reward_spec(self):
        return self._environments[0].reward_spec()

    def discount_spec(self):
        return self._environments[0].discount_spec()

    def close(self) -> None:
        for environment in self._environments:
            close = getattr(environment, "close", None)
            if close is not None:
                close()
