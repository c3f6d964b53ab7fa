"""Reverb's part of a checkpoint: the checkpointer a replay server is built with, and the sizes a checkpoint holds.

Only the launch layer may import Reverb, so these live here and not in `acmelike.checkpointing`, which takes them
as arguments (`Checkpointer(replay_client=..., read_replay_sizes=checkpoint_replay_sizes)`).
"""

import os
import shutil
import struct
import zlib
from typing import Optional

from acmelike.checkpointing import REPLAY, CheckpointError
from launch.lifecycle.run_directory import CHECKPOINTS

REPLAY_STAGING = "replay_staging"


def make_replay_checkpointer(run_dir: str, resume_from: Optional[str]):
    """A Reverb checkpointer writing under `<run_dir>/checkpoints/replay_staging/` (`Checkpointer.save` moves each
    replay checkpoint into the checkpoint it belongs to); with `resume_from` (a checkpoint's path), the server
    built with it starts from that checkpoint's replay."""
    import reverb

    staging = os.path.join(run_dir, CHECKPOINTS, REPLAY_STAGING)
    shutil.rmtree(staging, ignore_errors=True)  # a Reverb checkpoint a killed save never moved
    os.makedirs(staging)
    fallback = None if resume_from is None else replay_directory(resume_from)
    return reverb.checkpointers.DefaultCheckpointer(path=staging, fallback_checkpoint_path=fallback)


def replay_directory(checkpoint: str) -> str:
    """The replay part of `checkpoint` (a checkpoint's path); CheckpointError if it has none."""
    directory = os.path.join(checkpoint, REPLAY)
    if not os.path.isdir(directory):
        raise CheckpointError(f"Checkpoint {checkpoint} has no replay ({directory} is missing).")
    return directory


def checkpoint_replay_sizes(replay_dir: str) -> dict:
    """{table: items} in the Reverb checkpoint at `replay_dir`, read from its tables file (items inserted minus
    items deleted, as each table's rate limiter counts them): the replay's size at the very moment it was saved,
    even while actors of a distributed program kept inserting."""
    from reverb.cc.checkpointing import checkpoint_pb2

    path = os.path.join(replay_dir, "tables.tfrecord")
    try:
        with open(path, "rb") as f:
            data = zlib.decompress(f.read())  # a ZLIB-compressed TFRecord file
    except (OSError, zlib.error) as error:
        raise CheckpointError(f"Cannot read the replay checkpoint's tables {path} ({error}).") from None
    sizes, offset = {}, 0
    while offset + 12 <= len(data):
        (length,) = struct.unpack("<Q", data[offset:offset + 8])
        record = data[offset + 12: offset + 12 + length]  # after the length and its CRC; the record's CRC follows
        offset += 12 + length + 4
        table = checkpoint_pb2.PriorityTableCheckpoint.FromString(record)
        sizes[table.table_name] = int(table.rate_limiter.insert_count - table.rate_limiter.delete_count)
    return sizes
