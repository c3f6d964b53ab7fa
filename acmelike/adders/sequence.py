"""SequenceAdder: fixed-length, possibly overlapping sequences of `Step`s (R2D2, IMPALA, MPO ...)."""

import enum
from typing import Optional, Sequence, Union

from acmelike.adders.reverb_base import PriorityFns, StepAdder, step_signature
from acmelike.types import NestedSpec, Step


class EndBehavior(enum.Enum):
    """What the last item of an episode holds. Example: sequence_length 3, period 2, rows 1..6 (from 1 here;
    6 is the final row):

        rows          1 2 3 4 5 6        items end at rows 3 and 5: [1 2 3], [3 4 5]; the last item is
        WRITE                 4 5 6      the last 3 rows, overlapping the previous item
        CONTINUE              5 6 F      F: the next episode's first row (written when it arrives)
        ZERO_PAD              5 6 0      0: an all-zero Step
        TRUNCATE              5 6        a shorter item
    """

    WRITE = "write"
    CONTINUE = "continue"
    ZERO_PAD = "zero_pad"
    TRUNCATE = "truncate"


class SequenceAdder(StepAdder):
    """Writes `Step` items with a leading time axis: [T, ...] per field (T = sequence_length, or less: TRUNCATE).

    Rows: Step(o_t, a_t, r_t, d_t, start_of_episode_t, extras_t) for every action, r_t and d_t (float32) from
    the timestep after a_t, then a final row holding the last observation, start_of_episode False and zeros.
    An episode of T actions has n = T + 1 rows. Numbering rows from 0 at the start of the episode (of the
    stream for CONTINUE), items are the windows [k p, k p + L) for k = 0, 1, ... (L = `sequence_length`,
    p = `period`), each created as soon as its last row is complete: after L, L + p, L + 2p, ... rows (the write
    points). If the episode's n rows end on a write point, that item is its last one. Otherwise the next window
    would be [w - L, w), w the next write point (w = L if n < L), holding the real rows [w - L, n), and the
    end of episode behaviour decides:

      WRITE:     an item of the last L rows (overlapping the previous item); an episode shorter than L is
                 zero-padded to L (Acme drops such episodes instead; padding keeps short episodes learnable).
      CONTINUE:  nothing special: rows keep being counted into the next episode, items span episodes, and
                 the next episode's first row has start_of_episode True.
      ZERO_PAD:  the window's real rows followed by w - n all-zero rows (length L).
      TRUNCATE:  only the window's real rows (length n - (w - L) < L).

    With period > L some rows belong to no window (by design); if the next window holds no real row, ZERO_PAD
    and TRUNCATE write nothing more (Acme would write an item of zeros or of the wrong length there).
    """

    def __init__(
        self,
        *,
        client,
        table_names: Union[str, Sequence[str]],
        sequence_length: int,
        period: int,
        end_of_episode_behavior: EndBehavior,
        priority_fns: PriorityFns = None,
        max_in_flight_items: int = 0,
    ):
        """Args:
        client: a `reverb.Client`.
        table_names: the tables each sequence is inserted into.
        sequence_length: L, the number of rows in an item (at most L for TRUNCATE), >= 1.
        period: p, the rows between the starts of consecutive items, >= 1 (p < L: overlapping items).
        end_of_episode_behavior: an `EndBehavior`, see the class docstring.
        priority_fns: table name -> callable(Step of numpy arrays [T, ...]) -> float; priority 1.0 where absent.
        max_in_flight_items: items allowed to wait unconfirmed by the server after each add. The default 0
            makes every item sampleable before `add` returns (items come only every `period` steps, so this
            costs little); raise it to let a writer run ahead of a slow server, or None to never flush mid-episode.
        """
        if sequence_length < 1 or period < 1:
            raise ValueError(
                f"SequenceAdder: sequence_length and period must be >= 1, got {sequence_length} and {period}."
            )
        if not isinstance(end_of_episode_behavior, EndBehavior):
            raise ValueError(
                f"SequenceAdder: end_of_episode_behavior must be an EndBehavior ({[b.name for b in EndBehavior]}), "
                f"got {end_of_episode_behavior!r}."
            )
        super().__init__(
            client=client,
            table_names=table_names,
            priority_fns=priority_fns,
            num_keep_alive_refs=sequence_length + 1,
            max_in_flight_items=max_in_flight_items,
        )
        self._length = sequence_length
        self._period = period
        self._behavior = end_of_episode_behavior
        self._clear()

    def _clear(self):
        self._rows = 0  # complete rows since the start of the episode (of the stream for CONTINUE)

    def _is_write_point(self, rows: int) -> bool:
        return rows == self._length or (rows > self._length and (rows - self._length) % self._period == 0)

    def _step_completed(self):
        self._rows += 1
        if self._is_write_point(self._rows):
            self._create_items(self._last_steps(self._length))

    def _episode_ended(self):
        if self._behavior is EndBehavior.CONTINUE:
            self._end_episode(clear_buffers=False)  # flushes the items; the history stays referencable
            return
        rows, length = self._rows, self._length
        if not self._is_write_point(rows):
            to_next_write = length - rows if rows < length else (length - rows) % self._period
            real_rows = length - to_next_write
            if self._behavior is EndBehavior.WRITE:
                self._append_zero_steps(max(0, length - rows))
                self._create_items(self._last_steps(length))
            elif real_rows > 0 and self._behavior is EndBehavior.ZERO_PAD:
                self._append_zero_steps(to_next_write)
                self._create_items(self._last_steps(length))
            elif real_rows > 0 and self._behavior is EndBehavior.TRUNCATE:
                self._create_items(self._last_steps(real_rows))
        self._end_episode(clear_buffers=True)
        self._clear()

    @staticmethod
    def signature(environment_spec, extras_spec: NestedSpec = (), sequence_length: Optional[int] = None) -> Step:
        """The `ArraySpec` tree of one item: a Step with leading time axis `sequence_length` (None: variable,
        as TRUNCATE needs); reward and discount float32, start_of_episode bool."""
        return step_signature(environment_spec, extras_spec, sequence_length)
