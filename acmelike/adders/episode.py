"""EpisodeAdder: one item per episode, the whole episode as `Step`s."""

from typing import Callable, Optional, Sequence, Union

import jax
import numpy as np

from acmelike.adders.reverb_base import PriorityFns, StepAdder, step_signature
from acmelike.adders.validation import InvalidStepError
from acmelike.types import NestedSpec, Step

PaddingFn = Callable[[tuple, object], object]  # (shape, dtype) -> array, e.g. numpy.zeros


def _padding(padding_fn: PaddingFn, field: str, zeros):
    """`padding_fn(shape, dtype)` for every leaf of a row's field, cast to the leaf's dtype and broadcast to its
    shape (a padding function may compute in another dtype, e.g. `np.zeros(s, d) - 1` is float64 for d float32
    when s is ()); a shape that does not broadcast is a ValueError naming the field."""

    def pad(path, zero):
        call = f"padding_fn{(zero.shape, zero.dtype)} for {field}{jax.tree_util.keystr(path)}"
        try:
            value = np.asarray(padding_fn(zero.shape, zero.dtype)).astype(zero.dtype)
        except Exception as error:  # noqa: BLE001 - the user's function: name where it failed
            raise ValueError(f"EpisodeAdder: {call} failed: {error!r}") from error
        try:
            return np.broadcast_to(value, zero.shape)
        except ValueError:
            raise ValueError(
                f"EpisodeAdder: {call} returned shape {value.shape}, which does not broadcast to {zero.shape}."
            ) from None

    return jax.tree_util.tree_map_with_path(pad, zeros)


class EpisodeAdder(StepAdder):
    """Writes each complete episode as one `Step` item with a leading time axis [T + 1, ...].

    Rows: Step(o_t, a_t, r_t, d_t, start_of_episode_t, extras_t) for each of the T actions, r_t and d_t
    (float32) from the timestep after a_t, then the final row: last observation, start_of_episode False, zeros.
    With `padding_fn` (e.g. `numpy.zeros`), every item is padded to exactly `max_sequence_length` rows whose
    fields are `padding_fn(shape, dtype)`, cast to the field's dtype (and broadcast to its shape); without it
    items have length T + 1 (variable).

    An episode with more than `max_sequence_length` rows raises an InvalidStepError on the `add` that exceeds it;
    that episode is dropped and the adder is ready for the next `add_first`. The item is written (and flushed)
    when the episode ends; a partial episode (`reset`, or `add_first` before the last timestep) writes nothing.
    """

    def __init__(
        self,
        *,
        client,
        table_names: Union[str, Sequence[str]],
        max_sequence_length: int,
        padding_fn: Optional[PaddingFn] = None,
        priority_fns: PriorityFns = None,
    ):
        """Args:
        client: a `reverb.Client`.
        table_names: the tables each episode is inserted into.
        max_sequence_length: the most rows an episode may have (T + 1 for T actions), >= 2.
        padding_fn: if given, (shape, dtype) -> array used to pad every episode to max_sequence_length rows.
        priority_fns: table name -> callable(Step of numpy arrays [T, ...]) -> float; priority 1.0 where absent.
        """
        if max_sequence_length < 2:
            raise ValueError(
                f"EpisodeAdder: max_sequence_length must be >= 2 (one action and the final observation), "
                f"got {max_sequence_length}."
            )
        super().__init__(
            client=client,
            table_names=table_names,
            priority_fns=priority_fns,
            num_keep_alive_refs=max_sequence_length + 1,
            max_in_flight_items=0,  # items are created at the episode end, which flushes them all anyway
        )
        self._max_length = max_sequence_length
        self._padding_fn = padding_fn
        self._clear()

    def _clear(self):
        self._rows = 0

    def _step(self, action, observation, rewards, discounts, extras, last):
        rows = self._rows + (2 if last else 1)  # a last timestep also adds the final row
        if rows > self._max_length:
            self.reset()
            raise InvalidStepError(
                f"{self._context}: the episode has more than max_sequence_length={self._max_length} rows (one per "
                f"action plus the final observation): this add would make {rows}. The episode was dropped; raise "
                f"max_sequence_length or limit the episode length (e.g. a step-limit wrapper)."
            )
        super()._step(action, observation, rewards, discounts, extras, last)

    def _step_completed(self):
        self._rows += 1

    def _episode_ended(self):
        length = self._rows
        if self._padding_fn is not None and length < self._max_length:
            try:
                padding = {
                    field: _padding(self._padding_fn, field, value) for field, value in self._zero_step.items()
                }
            except ValueError:
                self.reset()  # the episode is dropped; the adder is ready for the next add_first
                raise
            for _ in range(self._max_length - length):
                self._writer.append(padding)
            length = self._max_length
        self._create_items(self._last_steps(length))
        self._end_episode(clear_buffers=True)
        self._clear()

    @staticmethod
    def signature(environment_spec, extras_spec: NestedSpec = (), sequence_length: Optional[int] = None) -> Step:
        """The `ArraySpec` tree of one item: a Step with leading time axis `sequence_length` (None: variable;
        pass max_sequence_length when padding); reward and discount float32, start_of_episode bool."""
        return step_signature(environment_spec, extras_spec, sequence_length)
