"""UnrollableNetwork: a recurrent network as pure functions, stepped by actors and unrolled by learners."""

import dataclasses
from typing import Any, Callable, NamedTuple, Tuple

import flax.linen as nn
import jax
import jax.numpy as jnp


@dataclasses.dataclass(frozen=True)
class UnrollableNetwork:
    """Four pure functions over a recurrent network whose state is a pytree of arrays with a leading batch axis.

    init(key) -> params
    initial_state(batch_size) -> state                          the state at an episode's start (needs no params)
    apply(params, observations[B, ...], state) -> (outputs[B, ...], state)      one step
    unroll(params, observations[T, B, ...], state, starts[T, B]) -> (outputs[T, B, ...], state)

    `unroll` equals stepping `apply` T times, except that the state is reset to `initial_state` before every
    step t whose `starts[t]` is True (an episode starting inside the sequence). `state` is the state before the
    first step; the returned state is the state after the last one.
    """

    init: Callable[[Any], Any]
    initial_state: Callable[[int], Any]
    apply: Callable[[Any, jax.Array, Any], Tuple[Any, Any]]
    unroll: Callable[[Any, jax.Array, Any, jax.Array], Tuple[Any, Any]]


class LSTMState(NamedTuple):
    cell: jax.Array  # [B, H]
    hidden: jax.Array  # [B, H]


def reset_where(starts: jax.Array, state, initial_state):
    """`state` with the batch rows where `starts` ([B] bool) is True replaced by `initial_state`'s rows."""

    def select(initial, current):
        mask = jnp.reshape(starts, starts.shape + (1,) * (current.ndim - 1))
        return jnp.where(mask, initial, current)

    return jax.tree_util.tree_map(select, initial_state, state)


class _ResettingLSTMStep(nn.Module):
    """One LSTM step on `[B, D]` inputs that first resets the rows of the state where `start` is True."""

    hidden_size: int

    @nn.compact
    def __call__(self, state: LSTMState, inputs):
        embedding, start = inputs
        state = reset_where(start, state, lstm_initial_state(embedding.shape[0], self.hidden_size))
        (cell, hidden), output = nn.OptimizedLSTMCell(self.hidden_size, name="cell")(
            (state.cell, state.hidden), embedding
        )
        return LSTMState(cell=cell, hidden=hidden), output


def lstm_initial_state(batch_size: int, hidden_size: int) -> LSTMState:
    zeros = jnp.zeros((batch_size, hidden_size), jnp.float32)
    return LSTMState(cell=zeros, hidden=zeros)


class TorsoLSTMHead(nn.Module):
    """torso -> LSTM -> head, the shape of R2D2's and IMPALA's networks.

    The torso and head are feed-forward modules over `[N, ...]` batches; in `unroll` they run once over all
    T * B inputs and only the LSTM steps through time (`nn.scan`), which is what makes long unrolls of conv
    torsos affordable.
    """

    torso: nn.Module
    hidden_size: int
    head: nn.Module

    def setup(self):
        self.core = nn.scan(
            _ResettingLSTMStep,
            variable_broadcast="params",
            split_rngs={"params": False},
            in_axes=0,
            out_axes=0,
        )(self.hidden_size, name="lstm")

    def __call__(self, observations, state: LSTMState):
        """One step: observations [B, ...] -> (head outputs [B, ...], state)."""
        outputs, state = self.unroll(observations[None], state, jnp.zeros((1, observations.shape[0]), bool))
        return jax.tree_util.tree_map(lambda x: x[0], outputs), state

    def unroll(self, observations, state: LSTMState, starts):
        """observations [T, B, ...], starts [T, B] -> (head outputs [T, B, ...], final state)."""
        time, batch = observations.shape[:2]
        state = LSTMState(*state)  # a (cell, hidden) pair as replay returns it (e.g. a tf.nest copy of the class)
        embeddings = self.torso(jnp.reshape(observations, (time * batch,) + observations.shape[2:]))
        embeddings = jnp.reshape(embeddings, (time, batch) + embeddings.shape[1:])
        state, core_outputs = self.core(state, (embeddings, starts.astype(bool)))
        outputs = self.head(jnp.reshape(core_outputs, (time * batch, -1)))
        return jax.tree_util.tree_map(lambda x: jnp.reshape(x, (time, batch) + x.shape[1:]), outputs), state


def make_torso_lstm_network(
    torso: nn.Module, hidden_size: int, head: nn.Module, observation_shape: Tuple[int, ...], observation_dtype=jnp.float32
) -> UnrollableNetwork:
    """An `UnrollableNetwork` of `TorsoLSTMHead(torso, hidden_size, head)` for unbatched observations of the given
    shape; the state is an `LSTMState` of zeros at every episode start."""
    module = TorsoLSTMHead(torso=torso, hidden_size=hidden_size, head=head)

    def init(key):
        dummy = jnp.zeros((1,) + tuple(observation_shape), observation_dtype)
        return module.init(key, dummy, lstm_initial_state(1, hidden_size))

    def apply(params, observations, state):
        return module.apply(params, observations, state)

    def unroll(params, observations, state, starts):
        return module.apply(params, observations, state, starts, method=TorsoLSTMHead.unroll)

    return UnrollableNetwork(
        init=init,
        initial_state=lambda batch_size: lstm_initial_state(batch_size, hidden_size),
        apply=apply,
        unroll=unroll,
    )
