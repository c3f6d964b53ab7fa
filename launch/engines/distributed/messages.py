"""Node-to-node messages as bytes of plain values: arrays and JSON, never a pickle.

A message made here holds a nest (dicts with string keys, lists, tuples, named tuples) of numpy arrays and JSON
values (None, bools, numbers, strings). Decoding one builds arrays with `np.frombuffer` from a dtype on an
allow-list and reads the rest as JSON, so a message from the network can make values, never run code
(`pickle.loads` would run whatever its bytes name). A named tuple comes back as a named tuple with the same name
and fields (one class per name and fields in a process, so every message's structure is the same pytree), not as
the sender's class, which decoding never imports. Launchpad's courier hangs on calls whose arguments hold numpy arrays
(google-deepmind/launchpad#28), which is why arrays travel as bytes at all.

    message = encode((observations, starting, finished))       # bytes
    observations, starting, finished = decode(message)         # MessageError if it is not one of ours

Layout: MAGIC, the header's length (4 bytes, little-endian), the header (JSON: the nest, each array as
{"array": [dtype, shape, offset, size]}), then the arrays' bytes (little-endian, C order). Arrays come back
writable, each its own copy of the message's bytes.
"""

import collections
import functools
import json
import struct
from typing import Any, List, Tuple

import numpy as np

MAGIC = b"acmelike-message-1\n"
DTYPES = frozenset(
    ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16", "float32", "float64"]
)
_LENGTH = struct.Struct("<I")


class MessageError(ValueError):
    """Bytes that are not a message of this module, or a value that cannot be one."""


def encode(value: Any) -> bytes:
    """`value` (a nest of arrays, numpy scalars and JSON values; see the module docstring) as one message."""
    buffers: List[bytes] = []
    offset = [0]

    def describe(item):
        if isinstance(item, dict):
            if not all(isinstance(key, str) for key in item):
                raise MessageError(f"a message's dict keys must be strings, got {sorted(map(repr, item))}")
            return {"dict": {key: describe(entry) for key, entry in item.items()}}
        if isinstance(item, tuple) and hasattr(type(item), "_fields"):
            return {"namedtuple": [type(item).__name__, list(item._fields), [describe(entry) for entry in item]]}
        if isinstance(item, (list, tuple)):
            return {"list" if isinstance(item, list) else "tuple": [describe(entry) for entry in item]}
        if item is None or isinstance(item, (bool, int, float, str)):
            return {"value": item}
        array = np.asarray(item)
        if array.dtype.name not in DTYPES:
            raise MessageError(f"a message cannot carry an array of dtype {array.dtype} (only "
                               f"{', '.join(sorted(DTYPES))})")
        data = np.ascontiguousarray(array, dtype=array.dtype.newbyteorder("<")).tobytes()
        buffers.append(data)
        offset[0] += len(data)
        return {"array": [array.dtype.name, list(array.shape), offset[0] - len(data), len(data)]}

    header = json.dumps(describe(value), separators=(",", ":"), allow_nan=True).encode()
    return b"".join([MAGIC, _LENGTH.pack(len(header)), header] + buffers)


def decode(message: bytes) -> Any:
    """The value `encode` made `message` from; MessageError if `message` is anything else (a pickle, say)."""
    if not isinstance(message, (bytes, bytearray, memoryview)):
        raise MessageError(f"a message is bytes, not {type(message).__name__}")
    message = bytes(message)
    start = len(MAGIC) + _LENGTH.size
    if not message.startswith(MAGIC) or len(message) < start:
        raise MessageError(f"not a node message (it starts {message[:len(MAGIC)]!r}, not {MAGIC!r}); refused")
    (length,) = _LENGTH.unpack_from(message, len(MAGIC))
    try:
        header = json.loads(message[start:start + length].decode())
    except (UnicodeDecodeError, ValueError) as error:
        raise MessageError(f"a node message's header is not JSON ({error}); refused") from None
    data = memoryview(message)[start + length:]

    def build(node):
        if not isinstance(node, dict) or len(node) != 1:
            raise MessageError(f"a node message's header holds {node!r}, not one tagged entry; refused")
        ((kind, body),) = node.items()
        if kind == "value" and (body is None or isinstance(body, (bool, int, float, str))):
            return body
        if kind == "dict" and isinstance(body, dict):
            return {key: build(entry) for key, entry in body.items()}
        if kind in ("list", "tuple") and isinstance(body, list):
            entries = [build(entry) for entry in body]
            return entries if kind == "list" else tuple(entries)
        if kind == "namedtuple" and isinstance(body, list) and len(body) == 3 and isinstance(body[2], list):
            return _named_tuple_class(body[0], body[1])(*[build(entry) for entry in body[2]])
        if kind == "array":
            return _array(body, data)
        raise MessageError(f"a node message's header holds an unknown entry {kind!r}; refused")

    return build(header)


@functools.lru_cache(maxsize=256)
def _named_tuple_class_of(name: str, fields: Tuple[str, ...]):
    return collections.namedtuple(name, fields)


def _named_tuple_class(name, fields):
    """The one class of this process for named tuples called `name` with `fields` (identifiers: checked here)."""
    if not (isinstance(name, str) and isinstance(fields, list) and all(isinstance(f, str) for f in fields)):
        raise MessageError(f"a node message's named tuple {name!r} {fields!r} is not a name and field names; refused")
    try:
        return _named_tuple_class_of(name, tuple(fields))
    except (ValueError, TypeError) as error:  # collections.namedtuple refuses names that are not identifiers
        raise MessageError(f"a node message's named tuple {name!r} {fields!r}: {error}; refused") from None


def _array(body, data: memoryview) -> np.ndarray:
    try:
        dtype, shape, offset, size = body
        shape = tuple(shape)
        valid = (dtype in DTYPES and all(isinstance(n, int) and n >= 0 for n in shape) and isinstance(offset, int)
                 and isinstance(size, int) and 0 <= offset and offset + size <= len(data)
                 and size == np.dtype(dtype).itemsize * int(np.prod(shape, dtype=np.int64)))
    except (TypeError, ValueError):
        valid = False
    if not valid:
        raise MessageError(f"a node message's array entry {body!r} is not a known dtype ({', '.join(sorted(DTYPES))}) "
                           f"with a shape that fits its bytes; refused")
    little_endian = np.dtype(dtype).newbyteorder("<")
    return np.frombuffer(data[offset:offset + size], dtype=little_endian).astype(np.dtype(dtype)).reshape(shape)
