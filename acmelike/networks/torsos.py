"""Image torsos for pixel observations `[B, H, W, C]`: the Nature-DQN conv net, the IMPALA ResNet and the MinAtar
paper's small conv net."""

from typing import Sequence

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np


def _as_float_images(images: jax.Array) -> jax.Array:
    """uint8 frames are scaled to [0, 1]; bool (MinAtar's binary channels) and float frames are taken as they are."""
    if images.dtype == jnp.uint8:
        return images.astype(jnp.float32) / 255.0
    return images.astype(jnp.float32)


class NatureDQNTorso(nn.Module):
    """Mnih et al. (2015): conv 32x8x8/4, 64x4x4/2, 64x3x3/1, ReLU, then a dense layer. [B, H, W, C] -> [B, D]."""

    output_size: int = 512

    @nn.compact
    def __call__(self, images: jax.Array) -> jax.Array:
        x = _as_float_images(images)
        for features, kernel, stride in ((32, 8, 4), (64, 4, 2), (64, 3, 1)):
            x = nn.relu(nn.Conv(features, (kernel, kernel), (stride, stride), padding="VALID")(x))
        x = jnp.reshape(x, (x.shape[0], -1))
        return nn.relu(nn.Dense(self.output_size)(x))


class _PatchConv(nn.Module):
    """A stride-1, unpadded convolution computed as one matrix product over the image's k x k patches, with
    `nn.Conv`'s parameters (kernel [k, k, C, F], bias [F]) and initialisers: the same function of the same
    parameters.

    Why: the Anakin runner vmaps training over seeds, and a vmapped `nn.Conv` (one kernel per seed) becomes a
    grouped convolution, which CPU XLA runs slowly: for the MinAtar torso's gradient on a batch of 32 frames,
    10.3 ms for 5 seeds against 4.1 ms as a batched matrix product (1.2 ms either way for one seed).
    """

    features: int
    kernel_size: int

    @nn.compact
    def __call__(self, x: jax.Array) -> jax.Array:
        k, channels = self.kernel_size, x.shape[-1]
        kernel = self.param("kernel", nn.initializers.lecun_normal(), (k, k, channels, self.features))
        bias = self.param("bias", nn.initializers.zeros_init(), (self.features,))
        height, width = x.shape[-3] - k + 1, x.shape[-2] - k + 1
        # Patch features ordered (row, column, channel), as the kernel's leading axes flatten.
        patches = jnp.concatenate(
            [x[..., i:i + height, j:j + width, :] for i in range(k) for j in range(k)], axis=-1
        )
        return patches @ jnp.reshape(kernel, (k * k * channels, self.features)) + bias


class MinAtarTorso(nn.Module):
    """Young & Tian (2019), the network of the MinAtar paper's DQN: one conv 16x3x3/1 (no padding), ReLU, then a
    dense layer of 128, ReLU. Sized for MinAtar's 10x10 frames, where Nature-DQN's 8x8/4 stride does not fit.
    [B, H, W, C] -> [B, D]."""

    features: int = 16
    output_size: int = 128

    @nn.compact
    def __call__(self, images: jax.Array) -> jax.Array:
        conv = _PatchConv(self.features, 3, name="Conv_0")  # nn.Conv's name: parameters stay interchangeable
        x = nn.relu(conv(_as_float_images(images)))
        x = jnp.reshape(x, (x.shape[0], -1))
        return nn.relu(nn.Dense(self.output_size)(x))


class _ResidualBlock(nn.Module):
    features: int

    @nn.compact
    def __call__(self, x):
        y = nn.Conv(self.features, (3, 3))(nn.relu(x))
        y = nn.Conv(self.features, (3, 3))(nn.relu(y))
        return x + y


class ImpalaResNetTorso(nn.Module):
    """Espeholt et al. (2018), the deep IMPALA network: per stage a 3x3 conv, 3x3/2 max-pool and two residual
    blocks; then ReLU and a dense layer. [B, H, W, C] -> [B, D]."""

    channels: Sequence[int] = (16, 32, 32)
    output_size: int = 256

    @nn.compact
    def __call__(self, images: jax.Array) -> jax.Array:
        x = _as_float_images(images)
        for features in self.channels:
            x = nn.Conv(features, (3, 3))(x)
            x = nn.max_pool(x, (3, 3), strides=(2, 2), padding="SAME")
            x = _ResidualBlock(features)(x)
            x = _ResidualBlock(features)(x)
        x = jnp.reshape(nn.relu(x), (x.shape[0], -1))
        return nn.relu(nn.Dense(self.output_size)(x))


def check_image_observations(observation_spec, *, agent: str, torso: str, min_size: int) -> None:
    """Raises ValueError naming the agent, the torso and the spec unless observations are [H, W, C] images with
    H, W >= `min_size` (what the torso's strides need)."""
    shape = tuple(getattr(observation_spec, "shape", ()))
    if len(shape) != 3 or min(shape[:2]) < min_size:
        raise ValueError(
            f"{agent}'s {torso} torso takes image observations [height, width, channels] of at least "
            f"{min_size}x{min_size}, but the environment's observation spec is {observation_spec!r}. Use the MLP "
            f"torso (torso='mlp') for flat observations, or a pixel environment."
        )
    dtype = np.dtype(observation_spec.dtype)
    if not (np.issubdtype(dtype, np.floating) or dtype in (np.uint8, np.bool_)):
        raise ValueError(
            f"{agent}'s {torso} torso takes uint8, bool or floating-point images, but the observation spec is "
            f"{observation_spec!r}."
        )


# name -> (the torso, the smallest image side its kernels and strides take)
_IMAGE_TORSOS = {"nature_dqn": (NatureDQNTorso, 36), "impala_resnet": (ImpalaResNetTorso, 8),
                 "minatar_conv": (MinAtarTorso, 3)}
TORSO_NAMES = ("mlp",) + tuple(_IMAGE_TORSOS)


def make_torso(name: str, observation_spec, *, agent: str, hidden_sizes=(64,)) -> nn.Module:
    """The torso called `name` (one of `TORSO_NAMES`); ValueError naming the agent, the torso and the observation
    spec when the observations do not fit it. `hidden_sizes` are the MLP torso's layers."""
    if name == "mlp":
        dtype = np.dtype(getattr(observation_spec, "dtype", np.object_))
        if not (np.issubdtype(dtype, np.floating) or dtype == np.bool_):
            raise ValueError(
                f"{agent}'s mlp torso takes floating-point or bool observations (flattened), but the environment's "
                f"observation spec is {observation_spec!r}. For images use one of the conv torsos {TORSO_NAMES[1:]}."
            )
        from acmelike.networks.mlp import MLP

        return MLP(tuple(hidden_sizes), activate_final=True)
    if name in _IMAGE_TORSOS:
        torso, min_size = _IMAGE_TORSOS[name]
        check_image_observations(observation_spec, agent=agent, torso=name, min_size=min_size)
        return torso()
    raise ValueError(f"{agent}: unknown torso {name!r}; choose one of {TORSO_NAMES}.")
