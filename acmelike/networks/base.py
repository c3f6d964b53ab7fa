"""FeedForwardNetwork: a network as two pure functions, which is all learners and actors need."""

import dataclasses
from typing import Any, Callable


@dataclasses.dataclass(frozen=True)
class FeedForwardNetwork:
    """A pair of pure functions.

    init(key) -> params
    apply(params, *inputs) -> outputs    (inputs carry a leading batch dimension)
    """

    init: Callable[..., Any]
    apply: Callable[..., Any]


def from_flax_module(module, dummy_input) -> FeedForwardNetwork:
    """Wraps a flax.linen module; `dummy_input` is one unbatched input used to initialise parameters."""
    import jax.numpy as jnp

    def init(key):
        return module.init(key, jnp.asarray(dummy_input)[None])

    return FeedForwardNetwork(init=init, apply=module.apply)
