"""Reads TensorBoard event files back (TFRecord framing + tensorboardX's Event proto): no TensorFlow needed."""

import collections
import os
import struct


def read_scalars(directory: str) -> dict:
    """{tag: [(step, value), ...]} of every scalar in the event files under `directory`."""
    from tensorboardX.proto.event_pb2 import Event

    scalars = collections.defaultdict(list)
    for root, _, files in os.walk(directory):
        for name in sorted(files):
            if "tfevents" not in name:
                continue
            with open(os.path.join(root, name), "rb") as f:
                data = f.read()
            offset = 0
            while offset + 12 <= len(data):
                (length,) = struct.unpack("<Q", data[offset:offset + 8])
                record = data[offset + 12: offset + 12 + length]  # after the length and its CRC
                offset += 12 + length + 4  # and the record's CRC
                event = Event.FromString(record)
                for value in event.summary.value:
                    scalars[value.tag].append((event.step, value.simple_value))
    return dict(scalars)
