"""MLP: the multilayer perceptron torsos and heads of small-control agents."""

from typing import Callable, Sequence

import flax.linen as nn
import jax
import jax.numpy as jnp


class MLP(nn.Module):
    """Dense layers over flattened inputs `[B, ...] -> [B, layer_sizes[-1]]`.

    The activation follows every layer but the last, unless `activate_final`.
    """

    layer_sizes: Sequence[int]
    activation: Callable[[jax.Array], jax.Array] = nn.relu
    activate_final: bool = False
    kernel_init: Callable = nn.initializers.lecun_normal()
    final_kernel_init: Callable = None  # e.g. a small orthogonal init for policy logits

    @nn.compact
    def __call__(self, inputs: jax.Array) -> jax.Array:
        x = jnp.reshape(inputs, (inputs.shape[0], -1)).astype(jnp.float32)
        last = len(self.layer_sizes) - 1
        for i, size in enumerate(self.layer_sizes):
            init = self.final_kernel_init if (i == last and self.final_kernel_init is not None) else self.kernel_init
            x = nn.Dense(size, kernel_init=init)(x)
            if i < last or self.activate_final:
                x = self.activation(x)
        return x
