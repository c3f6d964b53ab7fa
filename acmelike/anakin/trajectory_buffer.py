"""TrajectoryBuffer: a ring buffer of `num_envs` parallel trajectories on the device, stored time-major, from which
uniformly chosen sequences of consecutive steps of one environment are sampled (DQN's n-step records).

    buffer = TrajectoryBuffer(max_length=25_000, num_envs=4, sequence_length=3, min_length=1_250)
    state = buffer.init(example_step)                 # every leaf [max_length, num_envs, ...], zeros
    state = buffer.add(state, steps)                  # steps: leaves [num_envs, L, ...], the recorder's layout
    sequences = buffer.sample(state, key, batch=32)   # leaves [32, sequence_length, ...]

Why time-major: the Anakin runner vmaps a whole training iteration over seeds, so the write index is batched. A
write at a batched index becomes an XLA scatter, which CPU XLA runs in place only when the scattered axes lead the
array. With the time axis behind the environment axis (flashbax's trajectory buffer, used here before) XLA
transposed and copied the whole buffer on every write: Anakin DQN on MinAtar Breakout with a 100k-step replay took
108 ms per iteration (8 environment steps and 8 SGD steps), 11 ms time-major. `benchmarks/anakin_replay.py`
measures both layouts; `tests/layers/test_trajectory_buffer.py` checks the compiled program for such copies.
"""

import dataclasses
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp


class TrajectoryBufferState(NamedTuple):
    experience: Any  # leaves [max_length, num_envs, ...]
    write_index: jax.Array  # int32 scalar: the time index the next step goes to
    is_full: jax.Array  # bool scalar: the ring has wrapped (every time index holds a step)


@dataclasses.dataclass(frozen=True)
class TrajectoryBuffer:
    """`max_length` steps of each of `num_envs` environments; once full, the oldest steps are overwritten.

    Attributes:
      max_length: steps kept per environment (the ring's length).
      num_envs: environments written at once; every add carries one row of steps per environment.
      sequence_length: consecutive steps per sampled sequence (n for n-step transitions).
      min_length: steps per environment before `can_sample` holds (at least `sequence_length`).
    """

    max_length: int
    num_envs: int
    sequence_length: int
    min_length: int

    def __post_init__(self):
        if not 1 <= self.sequence_length <= self.max_length:
            raise ValueError(
                f"TrajectoryBuffer: sequence_length must lie in [1, max_length={self.max_length}], "
                f"got {self.sequence_length}."
            )
        if not self.sequence_length <= self.min_length <= self.max_length:
            raise ValueError(
                f"TrajectoryBuffer: min_length must lie in [sequence_length={self.sequence_length}, "
                f"max_length={self.max_length}], got {self.min_length}: raise max_length (max_replay_size) or "
                "lower min_length (min_replay_size)."
            )

    def init(self, example_step: Any) -> TrajectoryBufferState:
        """An empty buffer for steps shaped like `example_step` (one environment's step, no batch axes)."""
        experience = jax.tree_util.tree_map(
            lambda x: jnp.zeros((self.max_length, self.num_envs) + jnp.shape(x), jnp.asarray(x).dtype), example_step
        )
        return TrajectoryBufferState(experience, jnp.zeros((), jnp.int32), jnp.zeros((), bool))

    def add(self, state: TrajectoryBufferState, steps: Any) -> TrajectoryBufferState:
        """Writes `steps` (leaves [num_envs, L, ...], L <= max_length) at the write index, wrapping around."""
        length = jax.tree_util.tree_leaves(steps)[0].shape[1]
        if length > self.max_length:
            raise ValueError(f"TrajectoryBuffer.add: {length} steps per environment exceed max_length "
                             f"{self.max_length}.")
        indices = (state.write_index + jnp.arange(length)) % self.max_length
        experience = jax.tree_util.tree_map(
            lambda stored, new: stored.at[indices].set(jnp.swapaxes(new, 0, 1).astype(stored.dtype)),
            state.experience, steps,
        )
        end = state.write_index + length
        return TrajectoryBufferState(experience, end % self.max_length, state.is_full | (end >= self.max_length))

    def size(self, state: TrajectoryBufferState) -> jax.Array:
        """Steps held per environment."""
        return jnp.where(state.is_full, self.max_length, state.write_index)

    def can_sample(self, state: TrajectoryBufferState) -> jax.Array:
        return self.size(state) >= self.min_length

    def sample(self, state: TrajectoryBufferState, key: jax.Array, batch: int) -> Any:
        """`batch` sequences (leaves [batch, sequence_length, ...]), each `sequence_length` consecutive steps of
        one environment, the environment and the first step uniform over every sequence that the buffer holds
        whole. Once full, a sequence never runs across the write index (from the newest step into the oldest).
        Call only where `can_sample` holds (below `sequence_length` steps the starts are meaningless)."""
        env_key, start_key = jax.random.split(key)
        envs = jax.random.randint(env_key, (batch,), 0, self.num_envs)
        num_starts = self.size(state) - self.sequence_length + 1
        offsets = jax.random.randint(start_key, (batch,), 0, jnp.maximum(num_starts, 1))
        oldest = jnp.where(state.is_full, state.write_index, 0)
        times = (oldest + offsets[:, None] + jnp.arange(self.sequence_length)) % self.max_length
        return jax.tree_util.tree_map(lambda stored: stored[times, envs[:, None]], state.experience)
