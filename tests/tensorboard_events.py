"""Reads TensorBoard event files back (TFRecord framing + tensorboardX's Event proto): no TensorFlow needed."""

import collections
import os
import struct


def _events(path: str):
    """The events of one file; a record cut short at its end (a writer killed mid-write, or still writing) is
    skipped, as TensorBoard skips it."""
    from tensorboardX.proto.event_pb2 import Event

    with open(path, "rb") as f:
        data = f.read()
    offset = 0
    while offset + 12 <= len(data):
        (length,) = struct.unpack("<Q", data[offset:offset + 8])
        if offset + 12 + length + 4 > len(data):
            return
        yield Event.FromString(data[offset + 12: offset + 12 + length])  # after the length and its CRC
        offset += 12 + length + 4  # and the record's CRC


def _is_session_start(event) -> bool:
    from tensorboardX.proto.event_pb2 import SessionLog

    return event.HasField("session_log") and event.session_log.status == SessionLog.START


def _event_files(directory: str):
    """{directory: [event file paths, oldest first]} (tensorboardX names files by creation time)."""
    runs = {}
    for root, _, files in os.walk(directory):
        names = sorted(name for name in files if "tfevents" in name)
        if names:
            runs[root] = [os.path.join(root, name) for name in names]
    return runs


def read_scalars(directory: str, purge: bool = True) -> dict:
    """{tag: [(step, value), ...]} of every scalar in the event files under `directory`.

    With `purge`, as TensorBoard shows them: a session START event at step S (a resumed run's `purge_step`)
    hides the scalars its directory's earlier events logged at step S or later.
    """
    scalars = collections.defaultdict(list)
    for paths in _event_files(directory).values():
        run = collections.defaultdict(list)  # one directory is one TensorBoard run
        for path in paths:
            for event in _events(path):
                if purge and _is_session_start(event):
                    for tag in run:
                        run[tag] = [(step, value) for step, value in run[tag] if step < event.step]
                for value in event.summary.value:
                    run[value.tag].append((event.step, value.simple_value))
        for tag, points in run.items():
            scalars[tag] += points
    return dict(scalars)


def session_starts(directory: str) -> list:
    """The steps of the session START events (resumed runs' purge steps) under `directory`."""
    return [event.step for paths in _event_files(directory).values() for path in paths for event in _events(path)
            if _is_session_start(event)]
