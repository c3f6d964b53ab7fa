"""What a step must be for an adder to write it, checked before anything is appended.

A Reverb column keeps the structure, shape and dtype of its first cell; a step that differs fails deep inside the
writer, or when an item is created, with an error that names a column index. The adders check every field of a
step here first, against a `FieldSpec` fixed once: from the table's signature where the table has one (so the
first step is already checked), otherwise from the first step of the adder's first episode.

Conversions, the only ones made (documented on the adders):

* observation, action, extras: a leaf whose dtype converts to the expected one without loss (numpy "safe"
  casting: int32 -> int64, uint8 -> float32, ...), an integer or bool array whose values the dtype holds
  exactly (an int64 action 3 for an int32 spec, as `np.array(3)` gives), or a Python bool/int/float that the
  dtype holds exactly (3 -> int32, 0.5 -> float32; not 3.0 -> int32), is cast. Floats are never narrowed
  (float64 -> float32 loses precision: convert observations with e.g. SinglePrecisionWrapper). Anything else is
  an `InvalidStepError`.
* reward, discount: any real number (bool, int, float, of any width; a list of numbers for an array) is accepted
  and stored as float32; it must be finite (a NaN or infinite reward or discount is an `InvalidStepError`). A
  single number (shape ()) fills an array or nested field: `dm_env.termination` and `truncation` give a scalar
  discount whatever the spec.

Otherwise shapes are never broadcast here: a leaf has exactly the expected shape (a `None` dimension in a table
signature matches any size). A step whose leaves already have the expected dtypes and shapes costs a few
attribute checks per leaf (about 3 us per step for the DQN item; benchmarks/replay_throughput.py measures it).
"""

import math
from typing import Any, List, NamedTuple, Optional, Sequence, Tuple

import jax
import numpy as np


class InvalidStepError(ValueError):
    """A step that an adder cannot write: names the field, the expected and received shape/dtype, and the step."""


class LeafSpec(NamedTuple):
    shape: Optional[Tuple[Optional[int], ...]]  # None: any shape; a None dimension: any size
    dtype: np.dtype


def leaf_spec_of(spec) -> LeafSpec:
    """A LeafSpec from a table signature's leaf (an `ArraySpec`, or a `tf.TensorSpec` from a Reverb server) or a dm_env
    spec, without importing TensorFlow."""
    shape = spec.shape
    if hasattr(shape, "rank"):  # a tf.TensorShape
        shape = None if shape.rank is None else tuple(shape.as_list())
    dtype = spec.dtype
    dtype = np.dtype(getattr(dtype, "as_numpy_dtype", dtype))  # tf.DType -> numpy
    return LeafSpec(None if shape is None else tuple(shape), dtype)


def _describe_value(value) -> str:
    if isinstance(value, (bool, int, float)):
        return f"a Python {type(value).__name__} ({value!r})"
    shape, dtype = getattr(value, "shape", None), getattr(value, "dtype", None)
    if shape is None or dtype is None:
        return f"a {type(value).__name__}"
    return f"shape {tuple(shape)} and dtype {np.dtype(dtype).name}"


def _describe_spec(spec: LeafSpec, any_real: bool = False) -> str:
    shape = "any shape" if spec.shape is None else f"shape {spec.shape}"
    return f"{shape} and {'a real number type' if any_real else 'dtype ' + spec.dtype.name}"


def _shape_matches(shape, expected) -> bool:
    if expected is None:
        return True
    return len(shape) == len(expected) and all(e is None or s == e for s, e in zip(shape, expected))


def _python_scalar_fits(value, dtype: np.dtype) -> bool:
    """Whether a Python bool/int/float converts to `dtype` exactly (without NumPy's version-dependent rules)."""
    kind = dtype.kind
    if isinstance(value, bool):
        return kind in "biuf"
    if isinstance(value, int):
        if kind in "iu":
            info = np.iinfo(dtype)
            return info.min <= value <= info.max
        return kind == "f"
    return kind == "f" and (not math.isfinite(value) or abs(value) <= np.finfo(dtype).max)


class FieldSpec:
    """The expected structure and per-leaf shape/dtype of one field of a step, and how to check a value against it.

    `source` says where the expectation came from (for error messages). `structure` is the tree structure of
    where the expectation came from (a tree of specs, or the first value), for building trees of the field's
    leaves; `treedef` is the exact structure accepted from steps: that of the first value whose key paths equal
    the expected ones (a table signature decodes namedtuples into classes of its own, so structures are first
    compared by their key paths, then by identity).
    """

    def __init__(
        self, field: str, paths: Sequence[str], leaves: Sequence[LeafSpec], source: str, structure, treedef=None
    ):
        self.field = field
        self.paths = list(paths)
        self.leaves = list(leaves)
        self.source = source
        self.structure = structure
        self.treedef = treedef
        self.is_leaf = self.paths == [""]
        only = self.leaves[0] if self.is_leaf else None
        # The fast path's constants: the value a step usually carries (an array, or a NumPy scalar of shape ()).
        self._dtype = only.dtype if only else None
        self._shape = only.shape if only else None
        self._scalar_type = only.dtype.type if only and only.shape == () else None

    @classmethod
    def from_specs(cls, field: str, specs, source: str) -> "FieldSpec":
        """From a table signature (`ArraySpec`s, or `tf.TensorSpec`s from a Reverb server) or dm_env specs."""
        flat, structure = jax.tree_util.tree_flatten_with_path(specs)
        paths = [jax.tree_util.keystr(path) for path, _ in flat]
        return cls(field, paths, [leaf_spec_of(s) for _, s in flat], source, structure)

    @classmethod
    def from_value(cls, field: str, value, source: str, *, any_real: bool = False) -> "FieldSpec":
        """From a step's value (its structure, shapes and dtypes); with `any_real`, dtypes are float32."""
        flat, treedef = jax.tree_util.tree_flatten_with_path(value)
        leaves = []
        for _, leaf in flat:
            array = np.asarray(leaf)
            leaves.append(LeafSpec(array.shape, np.dtype(np.float32) if any_real else array.dtype))
        return cls(field, [jax.tree_util.keystr(path) for path, _ in flat], leaves, source, treedef, treedef)

    def strip_time(self) -> "FieldSpec":
        """The spec of one row of a [T, ...] item signature."""
        leaves = [LeafSpec(None if s.shape is None else s.shape[1:], s.dtype) for s in self.leaves]
        return type(self)(self.field, self.paths, leaves, self.source, self.structure)

    # Checking.

    def flatten(self, value, where: str) -> List[Any]:
        """The leaves of `value` in the expected order, or an InvalidStepError if its structure differs."""
        leaves, treedef = jax.tree_util.tree_flatten(value)
        if self.treedef is None or treedef != self.treedef:
            flat, _ = jax.tree_util.tree_flatten_with_path(value)
            paths = [jax.tree_util.keystr(path) for path, _ in flat]
            if self.treedef is not None or paths != self.paths:
                expected = self.treedef if self.treedef is not None else [self.field + p for p in self.paths]
                raise InvalidStepError(
                    f"{where}: {self.field} has structure {treedef} (leaves {[self.field + p for p in paths]}), "
                    f"but {self.source} expects {expected}. Every step must have the same structure as the "
                    f"table's signature (build it with the adder's `signature` from the same specs)."
                )
            self.treedef = treedef
        return leaves

    def check(self, value, where: str):
        """`value`, with leaves cast where the conversion is lossless; an InvalidStepError if it cannot be written.

        A field expected to have no leaves (e.g. no extras) accepts any leafless value (`()`, `{}`, None) as `()`.
        """
        if not self.paths:
            if value.__class__ is tuple and not value:
                return value
            if jax.tree_util.tree_leaves(value):
                raise InvalidStepError(
                    f"{where}: {self.field} has leaves {jax.tree_util.tree_structure(value)}, but {self.source} "
                    f"expects none. Build the table's signature with the {self.field} spec you pass."
                )
            return ()
        if self.is_leaf:
            cls = value.__class__
            if cls is self._scalar_type or (
                cls is np.ndarray and value.dtype is self._dtype and value.shape == self._shape
            ):
                return value  # the common case: nothing to convert
            if not isinstance(value, (dict, list, tuple)) and value is not None:
                return self._convert(value, self.leaves[0], "", where)
        leaves = self.flatten(value, where)
        converted = None
        for i, (leaf, spec) in enumerate(zip(leaves, self.leaves)):
            if leaf.__class__ is np.ndarray and leaf.dtype is spec.dtype and leaf.shape == spec.shape:
                continue
            new = self._convert(leaf, spec, self.paths[i], where)
            if new is not leaf:
                if converted is None:
                    converted = list(leaves)
                converted[i] = new
        return value if converted is None else jax.tree_util.tree_unflatten(self.treedef, converted)

    def _convert(self, leaf, spec: LeafSpec, path: str, where: str):
        def error(problem):
            return InvalidStepError(
                f"{where}: {self.field}{path} has {_describe_value(leaf)}, but {self.source} expects "
                f"{_describe_spec(spec)}. {problem}"
            )

        if isinstance(leaf, (bool, int, float)):
            if not _shape_matches((), spec.shape):
                raise error("Pass an array of the expected shape.")
            if not _python_scalar_fits(leaf, spec.dtype):
                raise error(f"The value does not convert to {spec.dtype.name} exactly; pass a {spec.dtype.name}.")
            return np.asarray(leaf, spec.dtype)
        try:
            array = np.asarray(leaf)
        except Exception as exception:  # noqa: BLE001 - reported with the field's name
            raise error(f"It is not convertible to a NumPy array ({exception}).") from exception
        if not _shape_matches(array.shape, spec.shape):
            raise error("Shapes are never broadcast: pass the expected shape.")
        if array.dtype == spec.dtype:
            return array
        if np.can_cast(array.dtype, spec.dtype, casting="safe"):
            return array.astype(spec.dtype)
        if array.dtype.kind in "biu" and spec.dtype.kind in "biuf":
            cast = array.astype(spec.dtype)
            if np.array_equal(cast, array):  # every value survives the cast
                return cast
        raise error(
            f"Only lossless casts are made (numpy 'safe' casting, or integers whose values fit); convert it to "
            f"{spec.dtype.name} yourself (for observations e.g. with SinglePrecisionWrapper)."
        )


class RealFieldSpec(FieldSpec):
    """A reward or discount: any real number type is accepted, values must be finite.

    `leaves_of(value, where)` returns the leaves in the expected order: Python floats for scalar leaves, float64
    arrays otherwise (the adders' n-step sums are computed in float64 and stored as float32).
    """

    def leaves_of(self, value, where: str) -> List[Any]:
        if self.is_leaf:
            if value.__class__ in _REAL_SCALARS and self._shape == ():
                number = float(value)
                if number - number == 0.0:  # finite: inf - inf and nan - nan are nan
                    return [number]
            if not isinstance(value, (dict, list, tuple)) and value is not None:
                return [self._real(value, self.leaves[0], "", where)]
        if self.is_leaf and isinstance(value, (list, tuple)):
            leaves = [np.asarray(value)]  # a list of numbers for an array reward or discount
        elif not isinstance(value, (dict, list, tuple)) and value is not None and np.ndim(value) == 0:
            leaves = [value] * len(self.leaves)  # one number for every leaf, e.g. dm_env.termination's discount 0.0
        else:
            leaves = self.flatten(value, where)
        return [self._real(leaf, spec, path, where) for leaf, spec, path in zip(leaves, self.leaves, self.paths)]

    def _real(self, leaf, spec: LeafSpec, path: str, where: str):
        def error(problem):
            return InvalidStepError(
                f"{where}: {self.field}{path} has {_describe_value(leaf)}, but {self.source} expects "
                f"{_describe_spec(spec, any_real=True)}. {problem}"
            )

        try:
            array = np.asarray(leaf)
        except Exception as exception:  # noqa: BLE001 - reported with the field's name
            raise error(f"It is not convertible to a NumPy array ({exception}).") from exception
        if array.dtype.kind not in "biuf":
            raise error(f"{self.field.capitalize()}s must be real numbers.")
        if array.shape == () and spec.shape is not None and None not in spec.shape:
            array = np.full(spec.shape, array, np.float64)  # a single number fills the leaf
        elif not _shape_matches(array.shape, spec.shape):
            raise error("Only a single number is broadcast: pass the expected shape.")
        array = array.astype(np.float64)
        if not np.isfinite(array).all():
            raise error(f"It is not finite ({array.tolist()}): a NaN or infinite {self.field} would poison learning.")
        return float(array) if array.shape == () else array


_REAL_SCALARS = frozenset({float, int, np.float16, np.float32, np.float64, np.int32, np.int64})
