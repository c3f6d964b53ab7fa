"""Node-to-node messages (`launch.engines.distributed.messages`): nests of arrays and JSON values make the round
trip exactly; a pickle, unknown bytes, an unknown dtype or a lying header are refused, and nothing is executed."""

import collections
import os
import pickle
import struct

import jax
import numpy as np
import pytest

from launch.engines.distributed import messages
from launch.engines.distributed.messages import MessageError, decode, encode

State = collections.namedtuple("State", ["c", "h"])


def _same(a, b) -> None:
    assert jax.tree_util.tree_structure(a) == jax.tree_util.tree_structure(b)
    for x, y in zip(jax.tree_util.tree_leaves(a), jax.tree_util.tree_leaves(b)):
        if isinstance(x, np.ndarray):
            assert isinstance(y, np.ndarray) and x.dtype == y.dtype and x.shape == y.shape
            np.testing.assert_array_equal(x, y)
        else:
            assert type(x) is type(y) and x == y


def test_a_nest_of_arrays_and_plain_values_makes_the_round_trip():
    value = (
        {"pixels": np.arange(2 * 3 * 4, dtype=np.uint8).reshape(2, 3, 4), "agent_1": [np.float32(0.5), None]},
        np.array([True, False]),
        np.zeros((0, 5), np.float64),  # empty
        np.array(7, np.int64),  # 0-d
        np.arange(6, dtype=">i4").reshape(2, 3),  # big-endian in, native out, same values
        [1, 2.5, "text", True, None],
        (),
    )
    back = decode(encode(value))
    assert back[4].dtype == np.int32 and back[4].dtype.isnative
    value = value[:4] + (value[4].astype(np.int32),) + value[5:]
    assert back[0]["agent_1"][0].dtype == np.float32  # a numpy scalar travels as a 0-d array
    value[0]["agent_1"][0] = np.asarray(value[0]["agent_1"][0])
    _same(back, value)
    back[0]["pixels"][0, 0, 0] = 99  # arrays come back writable, and their own
    assert decode(encode(value))[0]["pixels"][0, 0, 0] == 0


def test_named_tuples_come_back_with_their_fields_as_one_class_per_process():
    """R2D2's recurrent state (an LSTMState) travels in an actor's extras, whose key paths the adder checks."""
    first = decode(encode({"core_state": State(np.zeros(3, np.float32), np.ones(3, np.float32))}))
    second = decode(encode({"core_state": State(np.ones(3, np.float32), np.zeros(3, np.float32))}))
    assert first["core_state"]._fields == ("c", "h") and type(first["core_state"]).__name__ == "State"
    assert type(first["core_state"]) is type(second["core_state"])
    assert [jax.tree_util.keystr(path) for path, _ in jax.tree_util.tree_flatten_with_path(first)[0]] == [
        "['core_state'].c", "['core_state'].h"]


class _RunsCode:
    def __reduce__(self):
        return os.system, ("touch /tmp/acmelike-message-test-ran",)


def test_a_pickle_is_refused_and_never_run(tmp_path):
    payload = pickle.dumps((_RunsCode(), np.zeros(2)))
    with pytest.raises(MessageError, match="not a node message"):
        decode(payload)
    assert not os.path.exists("/tmp/acmelike-message-test-ran")
    with pytest.raises(MessageError, match="not a node message"):
        decode(b"")
    with pytest.raises(MessageError, match="is bytes"):
        decode("a string")


def _forged(header: bytes, data: bytes = b"") -> bytes:
    return messages.MAGIC + struct.pack("<I", len(header)) + header + data


@pytest.mark.parametrize("header, data, match", [
    (b'{"array": ["object", [1], 0, 8]}', b"\0" * 8, "not a known dtype"),
    (b'{"array": ["float32", [4], 0, 16]}', b"\0" * 8, "fits its bytes"),  # says 16 bytes, holds 8
    (b'{"array": ["float32", [3], 0, 16]}', b"\0" * 16, "fits its bytes"),  # shape and size disagree
    (b'{"array": ["float32", [-1], 0, 4]}', b"\0" * 4, "fits its bytes"),
    (b'{"pickle": "gASVAAAA"}', b"", "unknown entry 'pickle'"),
    (b'{"namedtuple": ["os.system", ["a"], [{"value": 1}]]}', b"", "named tuple"),
    (b'{"namedtuple": ["T", ["__import__"], [{"value": 1}]]}', b"", "named tuple"),
    (b'{"value": {"a": 1}}', b"", "not one tagged entry|unknown entry"),
    (b"not json", b"", "not JSON"),
], ids=["object-dtype", "short-data", "shape-size", "negative-shape", "unknown-tag", "dotted-name", "dunder-field",
        "raw-dict", "not-json"])
def test_a_forged_or_unknown_message_is_refused(header, data, match):
    with pytest.raises(MessageError, match=match):
        decode(_forged(header, data))


def test_values_a_message_cannot_carry_are_named_when_encoding():
    with pytest.raises(MessageError, match="dtype object"):
        encode({"x": np.array([object()])})
    with pytest.raises(MessageError, match="keys must be strings"):
        encode({1: np.zeros(1)})
