"""How a LocalTable stores its items' data: one `Leaf` per leaf of the signature, holding that leaf of every item
by slot, so a sampled batch is one fancy index per leaf."""

from typing import List, Optional, Sequence, Tuple

import jax
import numpy as np


class Leaf:
    """One leaf of every item, by slot: a preallocated [capacity, *shape] array when the signature fixes the shape,
    else a list of per-item arrays (stacked when sampled).

    A leaf learned from a table's first item (no signature) starts as an array of that item's shape and dtype, and
    becomes a list the first time an item differs: a table without signature accepts anything, as in Reverb.
    """

    __slots__ = ("name", "dtype", "shape", "learned", "values")

    def __init__(self, name: str, dtype, shape: Tuple[Optional[int], ...], capacity: int, learned: bool):
        self.name, self.dtype, self.shape, self.learned = name, np.dtype(dtype), shape, learned
        fixed = None not in shape
        self.values = np.zeros((capacity, *shape), self.dtype) if fixed else [None] * capacity

    def check(self, value: np.ndarray, table: str, occupied: Sequence[int] = ()) -> None:
        """Raises a ValueError if `value` does not fit the table's signature (Reverb checks at create_item).

        A learned leaf becomes a list instead, keeping the values at the `occupied` slots."""
        if value.dtype == self.dtype and value.shape == self.shape:
            return
        if self.learned:
            if isinstance(self.values, np.ndarray):  # the first item that differs: anything goes from now on
                values = [None] * len(self.values)
                for slot in occupied:
                    values[slot] = self.values[slot]
                self.values = values
            return
        if value.dtype == self.dtype and value.ndim == len(self.shape) and all(
            want is None or want == got for want, got in zip(self.shape, value.shape)
        ):
            return
        shape = tuple("None" if dim is None else dim for dim in self.shape)
        raise ValueError(
            f"An item for table {table!r} does not fit its signature: leaf {self.name} should be {self.dtype} of "
            f"shape {shape}, got {value.dtype} of shape {value.shape}."
        )

    def gather(self, slots: np.ndarray, table: str) -> np.ndarray:
        if isinstance(self.values, np.ndarray):
            return self.values[slots]
        try:
            return np.stack([self.values[slot] for slot in slots])
        except ValueError:
            shapes = sorted({self.values[slot].shape for slot in slots})
            raise ValueError(
                f"Cannot batch leaf {self.name} of table {table!r}: the sampled items have shapes {shapes} (a "
                f"dataset over a Reverb table could not batch them either). Give the table a fixed-shape signature."
            ) from None


def leaves_of_signature(signature, capacity: int, table: str) -> Tuple[object, List[Leaf]]:
    """The structure of a signature (a nest of `ArraySpec`s) and one `Leaf` per leaf, for `capacity` items."""
    flat, treedef = jax.tree_util.tree_flatten_with_path(signature)
    leaves = []
    for path, spec in flat:
        name = jax.tree_util.keystr(path)
        leaves.append(Leaf(name, spec.dtype, spec.shape, capacity, learned=False))
    return treedef, leaves
