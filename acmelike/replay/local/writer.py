"""LocalTrajectoryWriter: Reverb's TrajectoryWriter in memory, and the history columns its items reference.

One writer serves both in-memory destinations: a `LocalReplay`'s tables, and a `BatchedAdder`'s sub-environments,
whose items are grouped before they reach the real replay (`acmelike.adders.batched`).
"""

from typing import Callable, Dict, List, Optional

import jax
import numpy as np

# What `create_item` hands an item to: (table, priority, the item's leaves as arrays, its tree structure).
ItemSink = Callable[[str, float, List[np.ndarray], object], None]


class TrajectoryColumn:
    """Cells of one history column, what indexing `writer.history` gives (like `reverb.TrajectoryColumn`): a single
    row (`column[i]`, no time axis) or several (`column[a:b]`, a leading time axis)."""

    __slots__ = ("_values", "_squeezed")

    def __init__(self, values: tuple, squeezed: bool):
        self._values, self._squeezed = values, squeezed

    def numpy(self) -> np.ndarray:
        """The referenced data: one row's array, or the rows stacked."""
        return np.array(self._values[0]) if self._squeezed else self._stacked()

    def _stacked(self) -> np.ndarray:
        if not self._values:
            raise ValueError("An empty slice of a history column cannot be part of an item.")
        try:
            return np.stack(self._values)
        except ValueError:
            shapes = [(value.dtype, value.shape) for value in self._values]
            raise ValueError(f"The rows of a trajectory column differ in dtype or shape: {shapes}.") from None


class _Column:
    """One leaf's history in the writer: live (it follows appends and is cleared in place, as Reverb's are).

    Rows are numbered from the last clear; only the last `keep` rows can be referenced (num_keep_alive_refs).
    The writer appends to `values` directly (once per leaf and step) and calls `trim` now and then.
    """

    __slots__ = ("values", "start", "keep", "path")

    def __init__(self, start: int, keep: int, path: str):
        self.values: list = []  # rows start, start + 1, ...; None where a row has no data for this column
        self.start = start  # a column created after row 0 has no data before its first row
        self.keep = keep
        self.path = path

    def trim(self) -> None:
        """Drops the rows that can no longer be referenced."""
        drop = len(self.values) - self.keep
        if drop > 0:
            del self.values[:drop]
            self.start += drop

    def clear(self) -> None:
        self.values.clear()
        self.start = 0

    def __len__(self) -> int:
        return self.start + len(self.values)

    def __getitem__(self, index) -> TrajectoryColumn:
        values, start = self.values, self.start
        rows = start + len(values)
        if type(index) is int:  # the common case, first
            row = index + rows if index < 0 else index
            if rows - self.keep <= row < rows and row >= start and values[row - start] is not None:
                return TrajectoryColumn((values[row - start],), True)
        if isinstance(index, (int, np.integer)):
            row = index + rows if index < 0 else index
            if not 0 <= row < rows:
                raise IndexError(f"Row {index} of history column {self.path} does not exist ({rows} rows).")
            return TrajectoryColumn((self._cell(row, rows),), True)
        if isinstance(index, slice):
            return TrajectoryColumn(tuple(self._cell(row, rows) for row in range(*index.indices(rows))), False)
        if isinstance(index, list):
            return TrajectoryColumn(tuple(self[i]._values[0] for i in index), False)
        raise TypeError(f"History column indices must be integers, slices or lists of integers, not {type(index)}.")

    def _cell(self, row: int, rows: int):
        if row < rows - self.keep:
            raise ValueError(
                f"Row {row} of history column {self.path} is out of the writer's keep-alive window: only the last "
                f"{self.keep} rows (num_keep_alive_refs) can be referenced, and {rows} have been appended."
            )
        value = self.values[row - self.start] if row >= self.start else None
        if value is None:
            raise ValueError(f"Row {row} of history column {self.path} holds no data.")
        return value


def _owned(value):
    """A leaf as the writer keeps it: numpy scalars are immutable, arrays are copied (the caller may reuse them)."""
    return value if isinstance(value, np.generic) else np.array(value)


_WHOLE = object()  # the one field of a writer whose rows are not dicts


class LocalTrajectoryWriter:
    """Reverb's TrajectoryWriter in memory: `create_item` hands each item to `sink` at once (a `LocalReplay` inserts
    it into its table; a `BatchedAdder` groups it with other sub-environments' items).

    Rows are appended with `append(data)`; `history` has the structure of the appended data (dict rows: the
    union of their fields) with one live column per leaf, indexed by row since the last `end_episode` that cleared
    the buffers: `history["observation"][-1]` is a single row without time axis, `[-3:]` a leading time axis of
    3. A field missing from a row holds no data there. Items hold copies of the referenced rows, exactly what a
    Reverb dataset would hand back for them. `flush` has nothing to wait for.

    Differences from Reverb 0.7.2: the nest of a field (or of non-dict rows) is fixed by its first append, and a
    partial step (dict rows only) is closed by `end_episode`.
    """

    def __init__(self, sink: ItemSink, num_keep_alive_refs: int):
        if num_keep_alive_refs < 1:
            raise ValueError(f"num_keep_alive_refs must be >= 1, got {num_keep_alive_refs}.")
        self._sink = sink
        self._keep = num_keep_alive_refs
        # field -> (treedef, or None for a leaf field; its columns; their `values` lists)
        self._fields: Dict[object, tuple] = {}
        self._history: Dict[object, object] = {}  # field -> its nest of columns
        self._columns: List[_Column] = []
        self._rows = 0  # rows since the last clear, an open partial one included
        self._untrimmed = 0  # rows appended since the columns were last trimmed
        self._open = False  # the last row was appended with partial_step=True
        self._closed = False

    @property
    def history(self):
        """The columns, structured like the appended data (live: they follow later appends)."""
        if not self._fields:
            raise RuntimeError("history cannot be accessed before `append` is called at least once.")
        return self._history[_WHOLE] if _WHOLE in self._history else self._history

    def append(self, data, *, partial_step: bool = False) -> None:
        """Appends one row; with `partial_step`, the next append (dict rows) adds fields to the same row."""
        if self._closed:
            raise RuntimeError("append was called on a closed writer.")
        fields = self._fields
        if type(data) is not dict:
            if fields and _WHOLE not in fields:
                raise ValueError(f"This writer's rows are dicts (fixed by its first append), but got {type(data)}.")
            if partial_step:
                raise ValueError("Partial steps need dict rows.")
            data = {_WHOLE: data}
        elif _WHOLE in fields:
            raise ValueError("This writer's rows are not dicts (fixed by its first append), but got a dict.")
        if self._open:
            self._fill_open_row(data)
            self._open = partial_step
            return
        start, appended = self._rows, 0
        for field, value in data.items():
            if value is None:
                continue
            entry = fields.get(field)
            if entry is None:
                entry = self._add_field(field, value, start)
            treedef, _, lists = entry
            if treedef is None:
                lists[0].append(value if isinstance(value, np.generic) else np.array(value))
            else:
                for values, leaf in zip(lists, self._leaves_of(field, treedef, value)):
                    values.append(_owned(leaf))
            appended += 1
        if appended != len(fields):  # the fields this row lacks hold no data in it
            for column in self._columns:
                if len(column) == start:
                    column.values.append(None)
        self._rows = start + 1
        self._open = partial_step
        self._untrimmed += 1
        if self._untrimmed > self._keep + 16:  # amortised: columns hold at most 2 keep + 16 rows
            self._untrimmed = 0
            for column in self._columns:
                column.trim()

    def _fill_open_row(self, data: dict) -> None:
        for field, value in data.items():
            if value is None:
                continue
            entry = self._fields.get(field)
            if entry is None:
                entry = self._add_field(field, value, self._rows - 1)
                for values in entry[2]:
                    values.append(None)
            treedef, columns, _ = entry
            for column, leaf in zip(columns, [value] if treedef is None else self._leaves_of(field, treedef, value)):
                if not column.values or column.values[-1] is not None:
                    raise ValueError(f"Field {column.path} was already set in this step by a previous (partial) "
                                     f"append.")
                column.values[-1] = _owned(leaf)

    def _add_field(self, field, value, start: int) -> tuple:
        flat, treedef = jax.tree_util.tree_flatten_with_path(value)
        name = "" if field is _WHOLE else f"[{field!r}]"
        columns = [_Column(start, self._keep, name + jax.tree_util.keystr(path)) for path, _ in flat]
        leaf = treedef.num_nodes == 1 and treedef.num_leaves == 1
        self._fields[field] = entry = (None if leaf else treedef, columns, [column.values for column in columns])
        self._history[field] = treedef.unflatten(columns)
        self._columns.extend(columns)
        return entry

    @staticmethod
    def _leaves_of(field, treedef, value) -> list:
        try:
            return treedef.flatten_up_to(value)
        except (ValueError, TypeError):
            name = "the rows" if field is _WHOLE else f"field {field!r}"
            raise ValueError(
                f"The structure of {name} changed: it was {treedef} at its first append, now it is "
                f"{jax.tree_util.tree_structure(value)}."
            ) from None

    def create_item(self, table: str, priority: float, trajectory) -> None:
        """Hands `sink` an item for `table` holding the data `trajectory` references (a nest of history cells)."""
        if self._closed:
            raise RuntimeError("create_item was called on a closed writer.")
        cells, treedef = jax.tree_util.tree_flatten(trajectory)
        values = []
        for cell in cells:
            if type(cell) is not TrajectoryColumn:
                raise TypeError(f"All leaves of `trajectory` must be history cells (writer.history[...][...]), "
                                f"got {trajectory}.")
            values.append(cell._values[0] if cell._squeezed else cell._stacked())  # never changed in place
        self._sink(table, priority, values, treedef)

    def flush(self, block_until_num_items: int = 0, timeout_ms: Optional[int] = None) -> None:
        """Nothing to wait for: `create_item` has handed over every item already."""
        del timeout_ms
        if block_until_num_items < 0:
            raise ValueError(f"block_until_num_items must be >= 0, got {block_until_num_items}.")

    def end_episode(self, clear_buffers: bool = True, timeout_ms: Optional[int] = None) -> None:
        """Ends the episode: with `clear_buffers`, the history is emptied (in place) and rows count from 0 again."""
        del timeout_ms
        self._open = False
        if clear_buffers:
            self._rows = 0
            for column in self._columns:
                column.clear()

    def close(self) -> None:
        """Makes the writer unusable; its items were handed over already."""
        self._closed = True
