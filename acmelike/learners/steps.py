"""Several SGD steps in one jitted call, by `lax.scan` over slices of one large batch."""

from typing import Callable, Tuple

import jax
import jax.numpy as jnp

UpdateStep = Callable  # (state, batch) -> (state, metrics: dict of scalars, extras: dict of [B, ...] arrays)


def scan_update_steps(update_step: UpdateStep, num_steps: int) -> UpdateStep:
    """Turns an update on a batch of B into one on a batch of `num_steps * B` doing `num_steps` updates.

    The big batch is split along its leading axis into `num_steps` consecutive batches of B. Metrics come back
    stacked, `[num_steps]` per key; extras with their per-step batches joined again, `[num_steps * B, ...]`, so
    they line up with the big batch's items (e.g. priorities with sample keys).
    """
    if num_steps < 1:
        raise ValueError(f"num_steps must be >= 1, got {num_steps}.")

    def multi_step(state, batch) -> Tuple:
        def split(x):
            if x.shape[0] % num_steps:
                raise ValueError(f"batch leading dimension {x.shape[0]} is not divisible by num_steps={num_steps}.")
            return jnp.reshape(x, (num_steps, x.shape[0] // num_steps) + x.shape[1:])

        batches = jax.tree_util.tree_map(split, batch)
        state, (metrics, extras) = jax.lax.scan(
            lambda s, b: (lambda out: (out[0], (out[1], out[2])))(update_step(s, b)), state, batches
        )
        extras = jax.tree_util.tree_map(lambda x: jnp.reshape(x, (-1,) + x.shape[2:]), extras)
        return state, metrics, extras

    return multi_step
