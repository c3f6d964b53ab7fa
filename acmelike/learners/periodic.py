"""Updates every `period` SGD steps (target networks, TD3's delayed policy) that stay branches when a fully jitted
run vmaps an update step over seeds.

Under `vmap` a `lax.cond` whose predicate differs per seed becomes a select: both branches are computed every step
and whatever they return is copied through it. Every seed of a fully jitted run learns in the same iterations, so
their step counts are equal; reduced across the seeds axis (`seeds_axis`, the runner's `SEEDS_AXIS`), the decision
is one for every seed and the `lax.cond` stays a branch. Without an axis (one learner) nothing is reduced: the
same `lax.cond` on the same step count as `optax.periodic_update`'s, so the values are the same either way.
"""

from typing import Optional

import jax
import jax.numpy as jnp
import optax


def is_due(steps: jax.Array, period: int, seeds_axis: Optional[str] = None) -> jax.Array:
    """Whether `steps` is a multiple of `period`, decided once for every seed along `seeds_axis` (the vmapped axis
    along which every `steps` is the same; None: as it is)."""
    due = jnp.mod(steps, period) == 0
    return due if seeds_axis is None else jax.lax.pmin(due, seeds_axis)


def periodic_update(new_params: optax.Params, old_params: optax.Params, steps: jax.Array, period: int,
                    seeds_axis: Optional[str] = None) -> optax.Params:
    """`optax.periodic_update` (`new_params` every `period` steps, else `old_params`) as a branch across
    `seeds_axis`: the copy is taken only on the steps it is due, not selected element by element every step."""
    return jax.lax.cond(is_due(steps, period, seeds_axis), lambda _: new_params, lambda _: old_params, None)
