"""LocalReplay: the stand-in for a `reverb.Client` over LocalTables, and how it saves and restores them."""

import abc
import json
import os
import shutil
import tempfile
import zipfile
from typing import Dict, Mapping, Optional, Sequence, Tuple

import numpy as np

from acmelike.replay.local.table import LocalTable, TableInfo
from acmelike.replay.local.writer import LocalTrajectoryWriter
from acmelike.replay.tables import TableSpec

STATE_FILE = "local_replay.json"
ARRAYS_FILE = "local_replay.npz"
_FORMAT = "acmelike.LocalReplay/1"


class LocalFormatReplay(abc.ABC):
    """A replay client whose `checkpoint()` writes `LocalReplay`'s format: `LocalReplay` itself, and a
    `remote.RemoteReplay`, whose server holds one. Runners read the sizes in such a checkpoint with
    `checkpoint_sizes`; a `reverb.Client` is not one (its checkpoints are Reverb's, read by the launch layer:
    `launch.lifecycle.checkpoints.replay_size_reader`)."""

    @abc.abstractmethod
    def checkpoint(self) -> str:
        """Saves the replay into a new directory, in `LocalReplay.save`'s format, and returns its path."""

    @staticmethod
    def checkpoint_sizes(directory: str) -> Dict[str, int]:
        """{table: items} of a replay `save`d to `directory`, read from its metadata only."""
        path = os.path.join(directory, STATE_FILE)
        try:
            with open(path) as file:
                return {meta["name"]: int(meta["size"]) for meta in json.load(file)["tables"]}
        except (OSError, ValueError, KeyError, TypeError) as error:
            raise ValueError(f"Cannot read the replay sizes from {path}: {error}") from error


class LocalReplay(LocalFormatReplay):
    """Seeded in-process replay with the part of `reverb.Client`'s API our adders, datasets and learners use.

    Args:
      tables: the `TableSpec`s a builder described (`acmelike.replay.tables`); each becomes a `LocalTable`.
      seed: a non-negative integer; each table samples with a Generator derived from it and the table's name.
    """

    def __init__(self, tables: Sequence[TableSpec], *, seed: int):
        if not isinstance(seed, (int, np.integer)) or seed < 0:
            raise ValueError(f"LocalReplay: seed must be a non-negative integer, got {seed!r}.")
        self._tables: Dict[str, LocalTable] = {}
        for table in tables:
            if table.name in self._tables:
                raise ValueError(f"LocalReplay: two tables are named {table.name!r}.")
            self._tables[table.name] = LocalTable(table, seed=int(seed))

    @property
    def table_names(self) -> Tuple[str, ...]:
        return tuple(self._tables)

    def table(self, name: str) -> LocalTable:
        try:
            return self._tables[name]
        except KeyError:
            raise ValueError(f"There is no table {name!r}; the tables are {sorted(self._tables)}.") from None

    # The reverb.Client API.

    def trajectory_writer(self, num_keep_alive_refs: int) -> LocalTrajectoryWriter:
        """A writer whose items reference at most the last `num_keep_alive_refs` rows (see `LocalTrajectoryWriter`)."""
        return LocalTrajectoryWriter(self._insert, num_keep_alive_refs)

    def _insert(self, table: str, priority: float, values, treedef) -> None:
        self.table(table).insert_leaves(values, treedef, priority)

    def mutate_priorities(self, table: str, updates: Optional[Mapping[int, float]] = None,
                          deletes: Optional[Sequence[int]] = None) -> None:
        """Deletes the items `deletes`, then sets the priorities `updates` ({key: priority}); unknown keys are
        ignored, as in Reverb."""
        self.table(table).mutate_priorities(updates or {}, deletes or ())

    def reset(self, table: str) -> None:
        """Empties `table` and zeroes its rate limiter's counters."""
        self.table(table).reset()

    def server_info(self, timeout: Optional[float] = None) -> Dict[str, TableInfo]:
        """{name: TableInfo} as `reverb.Client.server_info` gives it (see `LocalTable.info`)."""
        del timeout
        return {name: table.info() for name, table in self._tables.items()}

    # Saving and restoring.

    def checkpoint(self) -> str:
        """Saves the replay into a new temporary directory and returns its path, as `reverb.Client.checkpoint`
        does (`acmelike.checkpointing.Checkpointer` moves it into the checkpoint it writes)."""
        directory = tempfile.mkdtemp(prefix="acmelike-local-replay-")
        try:
            self.save(directory)
        except BaseException:
            shutil.rmtree(directory, ignore_errors=True)
            raise
        return directory

    def save(self, directory: str) -> None:
        """Writes every table's state to `directory`/local_replay.json (metadata) and local_replay.npz (arrays)."""
        os.makedirs(directory, exist_ok=True)
        metas, arrays = [], {}
        for i, table in enumerate(self._tables.values()):
            meta, table_arrays = table.state()
            metas.append(meta)
            arrays.update({f"{i}.{name}": value for name, value in table_arrays.items()})
        with open(os.path.join(directory, ARRAYS_FILE), "wb") as file:
            np.savez(file, **arrays)
        with open(os.path.join(directory, STATE_FILE), "w") as file:
            json.dump({"format": _FORMAT, "tables": metas}, file)

    def restore(self, directory: str) -> None:
        """Replaces every table's contents with those `save` wrote to `directory`; the tables must be built as they
        were. A missing, corrupt or mismatched file raises a ValueError naming it, and then nothing is changed."""
        state_path = os.path.join(directory, STATE_FILE)
        arrays_path = os.path.join(directory, ARRAYS_FILE)
        try:
            with open(state_path) as file:
                state = json.load(file)
            metas = state["tables"]
            if state.get("format") != _FORMAT or [meta["name"] for meta in metas] != list(self._tables):
                raise ValueError(f"it holds tables {[meta['name'] for meta in metas]} in format "
                                 f"{state.get('format')!r}, expected {list(self._tables)} in {_FORMAT!r}")
        except (OSError, ValueError, KeyError, TypeError) as error:
            raise ValueError(f"Cannot restore the replay from {state_path}: {error}") from error
        try:
            with np.load(arrays_path, allow_pickle=False) as npz:
                arrays = {name: npz[name] for name in npz.files}
        except (OSError, ValueError, EOFError, zipfile.BadZipFile) as error:
            raise ValueError(f"Cannot restore the replay from {arrays_path}: {error!r}") from error
        appliers = []
        for i, (meta, table) in enumerate(zip(metas, self._tables.values())):
            prefix = f"{i}."
            table_arrays = {name[len(prefix):]: value for name, value in arrays.items() if name.startswith(prefix)}
            source = f"{state_path} and {arrays_path}"
            try:
                appliers.append(table.checked_state(meta, table_arrays, source))
            except (KeyError, TypeError) as error:
                raise ValueError(f"{source}: table {table.name!r}: missing or malformed {error}") from error
        for apply in appliers:
            apply()
