"""Anakin DQN's on-device replay: `TrajectoryBuffer` (time-major) against the environment-major layout that
flashbax's trajectory buffer uses (the baseline, written here in a few lines and measured in this run).

Both sides run what Anakin DQN's iteration does to its replay, vmapped over seeds as the Anakin runner vmaps whole
iterations: write one row of steps per environment at the (batched) write index, then sample `batch` sequences of
`n` steps. MinAtar-shaped steps (10x10x4 observation and next observation), a 100k-step replay (25k per each of
4 environments), 5 seeds (quick: 2). The rate is iterations (writes + samples) per second, all seeds together.

    .venv/bin/python benchmarks/anakin_replay.py [--quick] [--out DIR]
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from benchmarks.common import run_seed_pair  # noqa: E402

NUM_ENVS, TIME_AXIS, SEQUENCE, BATCH, OBSERVATION = 4, 25_000, 3, 32, (10, 10, 4)
# Iterations per jitted call: the baseline is ~10^4 times slower, so it runs fewer for the same wall time.
ITERATIONS, BASELINE_ITERATIONS = 2_000, 10


def make_loops(num_seeds: int):
    """Returns (ours, baseline): callables that run write+sample iterations for every seed (ITERATIONS, and
    BASELINE_ITERATIONS) and return how many they ran."""
    import jax
    import jax.numpy as jnp

    from acmelike.anakin import TrajectoryBuffer, TrajectoryBufferState

    class EnvironmentMajor(TrajectoryBuffer):
        """The baseline: leaves [num_envs, max_length, ...], written with `.at[:, times]`, as flashbax does."""

        def init(self, example_step):
            state = super().init(example_step)
            return state._replace(experience=jax.tree_util.tree_map(lambda x: jnp.swapaxes(x, 0, 1),
                                                                     state.experience))

        def add(self, state, steps):
            length = jax.tree_util.tree_leaves(steps)[0].shape[1]
            times = (state.write_index + jnp.arange(length)) % self.max_length
            experience = jax.tree_util.tree_map(lambda stored, new: stored.at[:, times].set(new),
                                                state.experience, steps)
            end = state.write_index + length
            return TrajectoryBufferState(experience, end % self.max_length, state.is_full | (end >= self.max_length))

        def sample(self, state, key, batch):
            env_key, start_key = jax.random.split(key)
            envs = jax.random.randint(env_key, (batch,), 0, self.num_envs)
            offsets = jax.random.randint(start_key, (batch,), 0, jnp.maximum(self.size(state) - self.sequence_length + 1, 1))
            oldest = jnp.where(state.is_full, state.write_index, 0)
            times = (oldest + offsets[:, None] + jnp.arange(self.sequence_length)) % self.max_length
            return jax.tree_util.tree_map(lambda stored: stored[envs[:, None], times], state.experience)

    example = {"observation": jnp.zeros(OBSERVATION), "next_observation": jnp.zeros(OBSERVATION),
               "reward": jnp.zeros(()), "action": jnp.zeros((), jnp.int32)}
    row = jax.tree_util.tree_map(lambda x: jnp.ones((NUM_ENVS, 1) + x.shape, x.dtype), example)

    def make(buffer_class, iterations):
        buffer = buffer_class(max_length=TIME_AXIS, num_envs=NUM_ENVS, sequence_length=SEQUENCE,
                              min_length=SEQUENCE)

        def one_seed(state, key):
            def body(state, key):
                state = buffer.add(state, row)
                return state, buffer.sample(state, key, BATCH)["reward"].sum()

            return jax.lax.scan(body, state, jax.random.split(key, iterations))

        loop = jax.jit(jax.vmap(one_seed), donate_argnums=0)
        states = jax.vmap(lambda _: buffer.init(example))(jnp.arange(num_seeds))
        box = {"states": states, "keys": jax.random.split(jax.random.PRNGKey(0), num_seeds)}

        def run() -> int:
            box["states"], outputs = loop(box["states"], box["keys"])
            jax.block_until_ready(outputs)
            return iterations

        run()  # compile
        return run

    return make(TrajectoryBuffer, ITERATIONS), make(EnvironmentMajor, BASELINE_ITERATIONS)


def main(argv=None):
    run_seed_pair(
        "anakin_replay", __doc__.splitlines()[0], make_loops, packages=["jax", "jaxlib", "numpy"],
        config={"num_envs": NUM_ENVS, "time_axis": TIME_AXIS, "sequence_length": SEQUENCE, "batch": BATCH,
                "observation": list(OBSERVATION)},
        benchmark="anakin_replay: DQN replay write + sample, vmapped over seeds", unit="iterations/s",
        ours_label="TrajectoryBuffer (time-major)", baseline_label="environment-major (flashbax's layout)",
        note="{num_seeds} seeds, 100k-step replay of MinAtar-shaped steps", argv=argv,
    )


if __name__ == "__main__":
    main()
