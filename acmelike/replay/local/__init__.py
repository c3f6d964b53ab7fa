"""LocalReplay: seeded, in-process replay tables behind the part of Reverb's client API our adders and learners use.

A single-process run needs neither Reverb's server threads nor its gRPC stream (hundreds of microseconds per
environment step, even in process), and Reverb's samplers cannot be seeded. `LocalReplay` builds one `LocalTable` per
table description (`acmelike.replay.tables.TableSpec`: sampler, remover, sizes, rate limiter and signature) and
stands in for the `reverb.Client`: adders keep writing through `trajectory_writer`, unchanged. It imports neither
Reverb nor TensorFlow. Each table samples with its own numpy Generator derived from `seed` and the table's name, so
runs with the same seed are bit-identical.

    replay = LocalReplay(tables, seed=0)
    adder = builder.make_adder(replay_client=replay, ...)         # items enter their table at `create_item`
    dataset = LocalDataset(replay, table="priority_table", batch_size=256)
    if dataset.ready():
        batch = next(dataset)                                      # ReplaySample of numpy arrays, [256, ...]
        replay.mutate_priorities("priority_table", updates={key: priority})
    replay.save(directory)                                         # and `restore(directory)` to continue identically

Semantics are Reverb 0.7's, except that nothing waits: see `table` (LocalTable, ReplayWouldBlock). The writer is in
`writer`, the client and its saving in `replay`, the dataset in `dataset`; `rate_limiter` and `storage` serve the
table.
"""

from acmelike.replay.local.dataset import LocalDataset
from acmelike.replay.local.replay import ARRAYS_FILE, STATE_FILE, LocalFormatReplay, LocalReplay
from acmelike.replay.local.table import LocalTable, ReplayWouldBlock, TableInfo
from acmelike.replay.local.writer import LocalTrajectoryWriter, TrajectoryColumn

__all__ = [
    "ARRAYS_FILE",
    "LocalDataset",
    "LocalFormatReplay",
    "LocalReplay",
    "LocalTable",
    "LocalTrajectoryWriter",
    "ReplayWouldBlock",
    "STATE_FILE",
    "TableInfo",
    "TrajectoryColumn",
]
