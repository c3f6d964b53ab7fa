"""MuZero's learned model: representation, dynamics and prediction MLPs over a min-max normalised hidden state, with
categorical value and reward heads on MuZero's rescaled support."""

import dataclasses
from typing import Any, Sequence, Tuple

import flax.linen as nn
import jax
import jax.numpy as jnp

from acmelike.losses.muzero import categorical_value_transform
from acmelike.networks import MLP
from acmelike.specs import EnvironmentSpec, flat_observation_size, num_discrete_actions
from agents.muzero.config import MuZeroConfig


def _normalize(embedding: jax.Array) -> jax.Array:
    """Scales each hidden state to [0, 1] by its own min and max (the paper's normalisation: it keeps the hidden
    state in the range the prediction network was trained on, however many dynamics steps produced it)."""
    low = jnp.min(embedding, axis=-1, keepdims=True)
    high = jnp.max(embedding, axis=-1, keepdims=True)
    return (embedding - low) / jnp.maximum(high - low, 1e-8)


class Representation(nn.Module):
    """`[B, ...]` observations -> `[B, E]` hidden states."""

    hidden_sizes: Sequence[int]
    embedding_size: int

    @nn.compact
    def __call__(self, observations: jax.Array) -> jax.Array:
        return _normalize(MLP(tuple(self.hidden_sizes) + (self.embedding_size,))(observations))


class Dynamics(nn.Module):
    """(`[B, E]` hidden states, `[B]` actions) -> (`[B, E]` next hidden states, `[B, num_bins]` reward logits)."""

    hidden_sizes: Sequence[int]
    embedding_size: int
    num_actions: int
    num_bins: int

    @nn.compact
    def __call__(self, embedding: jax.Array, actions: jax.Array) -> Tuple[jax.Array, jax.Array]:
        inputs = jnp.concatenate([embedding, jax.nn.one_hot(actions, self.num_actions, dtype=embedding.dtype)], -1)
        hidden = MLP(tuple(self.hidden_sizes), activate_final=True)(inputs)
        next_embedding = _normalize(nn.Dense(self.embedding_size)(hidden))
        # Zero-initialised heads predict the support's centre, 0, until trained.
        reward_logits = nn.Dense(self.num_bins, kernel_init=nn.initializers.zeros)(hidden)
        return next_embedding, reward_logits


class Prediction(nn.Module):
    """`[B, E]` hidden states -> (`[B, A]` policy logits, `[B, num_bins]` value logits); uniform and 0 at init."""

    hidden_sizes: Sequence[int]
    num_actions: int
    num_bins: int

    @nn.compact
    def __call__(self, embedding: jax.Array) -> Tuple[jax.Array, jax.Array]:
        hidden = MLP(tuple(self.hidden_sizes), activate_final=True)(embedding)
        policy_logits = nn.Dense(self.num_actions, kernel_init=nn.initializers.zeros)(hidden)
        value_logits = nn.Dense(self.num_bins, kernel_init=nn.initializers.zeros)(hidden)
        return policy_logits, value_logits


@dataclasses.dataclass(frozen=True)
class MuZeroNetworks:
    """The model as pure functions of one parameter tree {"representation", "dynamics", "prediction"}.

    init(key) -> params
    represent(params, [B, ...] observations) -> [B, E] hidden states
    dynamics(params, [B, E] hidden states, [B] actions) -> ([B, E] next hidden states, [B, num_bins] reward logits)
    predict(params, [B, E] hidden states) -> ([B, A] policy logits, [B, num_bins] value logits)
    transform: scalar <-> categorical over the value and reward support (`categorical_value_transform`).
    """

    representation_net: Representation
    dynamics_net: Dynamics
    prediction_net: Prediction
    observation_shape: Tuple[int, ...]
    embedding_size: int
    num_actions: int
    transform: Any  # an rlax.TxPair

    def init(self, key: jax.Array) -> Any:
        representation_key, dynamics_key, prediction_key = jax.random.split(key, 3)
        embedding = jnp.zeros((1, self.embedding_size), jnp.float32)
        return {
            "representation": self.representation_net.init(
                representation_key, jnp.zeros((1,) + self.observation_shape, jnp.float32)),
            "dynamics": self.dynamics_net.init(dynamics_key, embedding, jnp.zeros((1,), jnp.int32)),
            "prediction": self.prediction_net.init(prediction_key, embedding),
        }

    def represent(self, params, observations: jax.Array) -> jax.Array:
        return self.representation_net.apply(params["representation"], observations)

    def dynamics(self, params, embedding: jax.Array, actions: jax.Array) -> Tuple[jax.Array, jax.Array]:
        return self.dynamics_net.apply(params["dynamics"], embedding, actions)

    def predict(self, params, embedding: jax.Array) -> Tuple[jax.Array, jax.Array]:
        return self.prediction_net.apply(params["prediction"], embedding)

    def to_scalar(self, logits: jax.Array) -> jax.Array:
        """`[..., num_bins]` value or reward logits -> `[...]` scalars."""
        return self.transform.apply_inv(jax.nn.softmax(logits))


def make_networks(environment_spec: EnvironmentSpec, config: MuZeroConfig = MuZeroConfig()) -> MuZeroNetworks:
    """Builds MuZero's model (sizes from `config`) for flat observations and discrete actions; raises ValueError
    naming MuZero and the spec that does not fit."""
    num_actions = num_discrete_actions(environment_spec, agent="MuZero")
    flat_observation_size(environment_spec, agent="MuZero")
    hidden = tuple(config.hidden_sizes)
    return MuZeroNetworks(
        representation_net=Representation(hidden, config.embedding_size),
        dynamics_net=Dynamics(hidden, config.embedding_size, num_actions, config.num_bins),
        prediction_net=Prediction(hidden, num_actions, config.num_bins),
        observation_shape=tuple(environment_spec.observations.shape),
        embedding_size=config.embedding_size,
        num_actions=num_actions,
        transform=categorical_value_transform(config.num_bins, config.max_value, config.rescaling_epsilon),
    )
