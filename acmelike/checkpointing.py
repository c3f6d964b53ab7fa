"""Checkpointer: atomic, periodic checkpoints of named `Saveable`s (and a Reverb replay) in one directory.

    checkpointer = Checkpointer("runs/0/checkpoints", {"learner": learner, "actor": actor, "counter": counter},
                                metadata={"agent": "dqn", ...}, replay_client=client, every_minutes=10)
    checkpointer.save_if_due(step)           # in the training loop; at a clean stop: checkpointer.save(step)
    ...
    checkpointer.restore()                   # after a restart: every object back to the latest checkpoint

On disk, one directory per checkpoint, named by its step (zero-padded, so names sort by step):

    checkpoints/000000012000/
        arrays/        orbax: every object whose state holds arrays (learner TrainingState, actor RNG/clock)
        <name>.json    every object whose state is only Python numbers, strings and lists/dicts of them (counters,
                       return trackers), and metadata.json (what the caller says identifies the run)
        replay/        the Reverb checkpoint taken at the same moment (if a replay client was given)

A checkpoint is written into `<step>.tmp/` and renamed to `<step>/` only when complete (rename is atomic on
POSIX filesystems), so a process killed during a save (even with SIGKILL) leaves the previous checkpoint as the
latest complete one; leftover `*.tmp` directories are removed when the next Checkpointer opens the directory.
The newest `max_to_keep` checkpoints are kept.

Its last file, `manifest.json`, records every other file's size and CRC-32. `latest_checkpoint` passes over a
checkpoint whose files no longer have their recorded sizes (truncated, deleted); `readable_checkpoint`, which a
resume calls once before it touches anything, also reads every byte against the CRCs, and sets aside as
`<step>.unreadable/` each newer checkpoint that fails, saying which file and why, so a resume goes on from the
newest checkpoint that reads.

Reverb writes its own checkpoint (`client.checkpoint()`) into a directory of the server's choosing; it is moved
into the checkpoint being written, so replay and learner always come from the same moment. A server restores it
when built with `launch.lifecycle.checkpoints.replay_checkpointer(directory)`. This module never imports Reverb.
"""

import json
import os
import re
import shutil
import time
import zlib
from typing import Any, Callable, Iterable, List, Mapping, Optional, Tuple

import jax
import numpy as np

from acmelike import core

_STEP_NAME = re.compile(r"^\d{12}$")
ARRAYS, REPLAY, METADATA, MANIFEST = "arrays", "replay", "metadata.json", "manifest.json"
UNREADABLE = ".unreadable"  # the suffix of a checkpoint `readable_checkpoint` set aside


class CheckpointError(RuntimeError):
    """A checkpoint is missing, incomplete, corrupt or belongs to another run; the message names the path."""


def checkpoint_name(step: int) -> str:
    return f"{int(step):012d}"


def list_checkpoints(directory: str) -> list:
    """Paths of the complete checkpoints in `directory`, oldest first (empty if there is none)."""
    if not os.path.isdir(directory):
        return []
    names = sorted(name for name in os.listdir(directory) if _STEP_NAME.match(name))
    return [os.path.join(directory, name) for name in names]


def latest_checkpoint(directory: str, *, explain: bool = False) -> Optional[str]:
    """The newest complete checkpoint in `directory` (every file the size its manifest records), or None; with
    `explain`, CheckpointError naming the newest one's faulty file instead of None when none is complete."""
    paths = list_checkpoints(directory)
    for path in reversed(paths):
        try:
            verify_checkpoint(path, read_all=False)
        except CheckpointError:
            continue
        return path
    if explain and paths:
        verify_checkpoint(paths[-1], read_all=False)
    return None


def readable_checkpoint(directory: str) -> Tuple[Optional[str], List[str]]:
    """The newest checkpoint in `directory` whose every file reads back as it was written (sizes and CRC-32s
    against its manifest; None if there is no checkpoint), and what was skipped to reach it: one line per newer
    checkpoint, naming the file that failed and why. Each skipped one is renamed `<step>.unreadable/` (kept for
    inspection), so every later `latest_checkpoint`, in any process, finds the same checkpoint.

    CheckpointError naming every checkpoint and its fault if none reads; then nothing is renamed.
    """
    path, faults = newest_checkpoint_passing(directory, verify_checkpoint)
    skipped = []
    for bad, why in faults:
        aside = bad + UNREADABLE
        shutil.rmtree(aside, ignore_errors=True)
        os.rename(bad, aside)
        skipped.append(f"skipped checkpoint {bad} (set aside as {aside}): {why}")
    return path, skipped


def newest_checkpoint_passing(
    directory: str, check: Callable[[str], Any]
) -> Tuple[Optional[str], List[Tuple[str, str]]]:
    """The newest checkpoint in `directory` that `check(path)` raises no CheckpointError for (None if there is no
    checkpoint), and (path, fault) of each newer one. CheckpointError naming every checkpoint's fault if none
    passes."""
    faults = []
    for path in reversed(list_checkpoints(directory)):
        try:
            check(path)
        except CheckpointError as error:
            faults.append((path, str(error)))
            continue
        return path, faults
    if faults:
        raise CheckpointError(
            f"No checkpoint in {directory} can be read: " + "; ".join(f"{path}: {why}" for path, why in faults)
            + ". The run cannot go on from them: start it again in a new run directory (or with --overwrite)."
        )
    return None, []


def verify_checkpoint(path: str, read_all: bool = True) -> None:
    """CheckpointError naming the file, if a file of the checkpoint at `path` is missing or differs from what its
    manifest records: its size, and (`read_all`) its CRC-32, which reads every byte. A checkpoint written before
    manifests existed has its JSON files parsed instead."""
    manifest_path = os.path.join(path, MANIFEST)
    if not os.path.exists(manifest_path):
        for name in sorted(os.listdir(path)):
            if name.endswith(".json"):
                _read_json(os.path.join(path, name))
        return
    for relative, (size, crc) in _read_json(manifest_path).items():
        file_path = os.path.join(path, relative)
        try:
            actual = os.path.getsize(file_path)
        except OSError:
            raise CheckpointError(f"Checkpoint file {file_path} is missing: the checkpoint is incomplete.") from None
        if actual != size:
            raise CheckpointError(f"Checkpoint file {file_path} is truncated or altered: {actual} bytes, "
                                  f"{size} when it was written.")
        if read_all and _crc32(file_path) != crc:
            raise CheckpointError(f"Checkpoint file {file_path} is corrupt: its contents differ from when it was "
                                  "written (CRC-32 mismatch).")


def _crc32(file_path: str) -> int:
    crc = 0
    try:
        with open(file_path, "rb") as f:
            while chunk := f.read(1 << 20):
                crc = zlib.crc32(chunk, crc)
    except OSError as error:
        raise CheckpointError(f"Checkpoint file {file_path} cannot be read ({error}).") from None
    return crc


def _write_manifest(path: str) -> None:
    """`<path>/manifest.json`: {file: [bytes, CRC-32]} of every file under `path`, written last."""
    files = {}
    for root, _, names in os.walk(path):
        for name in names:
            file_path = os.path.join(root, name)
            files[os.path.relpath(file_path, path)] = [os.path.getsize(file_path), _crc32(file_path)]
    _write_json(os.path.join(path, MANIFEST), dict(sorted(files.items())))


def checkpoint_step(path: str) -> int:
    return int(os.path.basename(os.path.normpath(path)))


def _is_json_state(state: Any) -> bool:
    """True for states made only of Python scalars/strings in dicts and lists (what JSON holds exactly)."""
    if isinstance(state, dict):
        return all(isinstance(key, str) and _is_json_state(value) for key, value in state.items())
    if isinstance(state, (list, tuple)) and not hasattr(state, "_fields"):
        return all(_is_json_state(value) for value in state)
    return state is None or isinstance(state, (bool, int, float, str))


def read_metadata(path: str) -> dict:
    """The metadata stored with the checkpoint at `path`; CheckpointError naming the file if unreadable."""
    return _read_json(os.path.join(path, METADATA))


def read_json_state(path: str, name: str) -> Any:
    """The saved state of object `name` (one stored as JSON, e.g. a counter) in the checkpoint at `path`."""
    return _read_json(os.path.join(path, f"{name}.json"))


def _read_json(file_path: str) -> Any:
    try:
        with open(file_path) as f:
            return json.load(f)
    except FileNotFoundError:
        raise CheckpointError(f"Checkpoint file {file_path} is missing: the checkpoint is incomplete.") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise CheckpointError(f"Checkpoint file {file_path} is corrupt ({error}).") from None


def _write_json(file_path: str, data: Any) -> None:
    with open(file_path, "w") as f:
        json.dump(data, f, indent=2)
        f.flush()
        os.fsync(f.fileno())


def _orbax():
    import orbax.checkpoint as ocp

    return ocp, ocp.Checkpointer(ocp.StandardCheckpointHandler())


class Checkpointer:
    """Saves and restores `objects` (name -> `core.Saveable`) together; see the module docstring.

    Args:
      directory: where the checkpoints live (created if missing).
      objects: what to save; each `save()` result is a pytree of arrays (stored with orbax) or of plain Python
        data (stored as JSON). Restoring calls each object's `restore()`.
      metadata: JSON data written with every checkpoint, e.g. the agent and its resolved config; `restore`
        compares it with the checkpoint's (see `expected_metadata` there).
      replay_client: something with `checkpoint() -> path` (a `reverb.Client`): its replay is saved alongside.
      read_replay_sizes: reads {table: items} from a replay checkpoint's directory, for the metadata's
        `replay_sizes` (`launch.lifecycle.checkpoints.checkpoint_replay_sizes`); without it, the client's sizes just before
        the checkpoint are recorded, which are exact only when nothing inserts meanwhile.
      every_minutes: `save_if_due` saves when this many minutes have passed since the last save (or the start).
      max_to_keep: complete checkpoints kept; older ones are deleted after each save.
      clock: seconds as a float (tests).
    """

    def __init__(
        self,
        directory: str,
        objects: Mapping[str, core.Saveable],
        *,
        metadata: Optional[Mapping[str, Any]] = None,
        replay_client: Any = None,
        read_replay_sizes: Optional[Callable[[str], Mapping[str, int]]] = None,
        every_minutes: float = 10.0,
        max_to_keep: int = 2,
        clock=time.monotonic,
    ):
        if every_minutes <= 0:
            raise ValueError(f"Checkpointer every_minutes must be > 0, got {every_minutes}.")
        if max_to_keep < 1:
            raise ValueError(f"Checkpointer max_to_keep must be >= 1, got {max_to_keep}.")
        for name, value in objects.items():
            if not isinstance(value, core.Saveable):
                raise TypeError(f"Checkpointer: {name!r} is a {type(value).__name__}, not an acmelike.core.Saveable.")
        self.directory = os.path.abspath(directory)  # orbax accepts absolute paths only
        self._objects = dict(objects)
        self._metadata = dict(metadata or {})
        self._replay_client = replay_client
        self._read_replay_sizes = read_replay_sizes
        self._period_s = every_minutes * 60.0
        self._max_to_keep = max_to_keep
        self._clock = clock
        self._last_save = clock()
        os.makedirs(directory, exist_ok=True)
        for name in os.listdir(directory):
            if name.endswith(".tmp"):  # a save that was killed before it completed
                shutil.rmtree(os.path.join(directory, name), ignore_errors=True)

    def due(self) -> bool:
        """Whether `every_minutes` have passed since the last save (or the start)."""
        return self._clock() - self._last_save >= self._period_s

    def save_if_due(self, step: int, **metadata: Any) -> Optional[str]:
        """Saves if `every_minutes` have passed since the last save; returns the path written, or None."""
        if not self.due():
            return None
        return self.save(step, **metadata)

    def save(self, step: int, **metadata: Any) -> str:
        """Writes the checkpoint of `step` atomically and returns its path (an existing one of that step is kept).

        `metadata` (JSON data) is stored beside the checkpointer's own metadata for this checkpoint only, e.g. how
        long the run's log files were. With a replay, `replay_sizes` ({table: items}) is added.
        """
        final = os.path.join(self.directory, checkpoint_name(step))
        self._last_save = self._clock()
        if os.path.exists(final):
            return final  # nothing happened since that save (e.g. a clean stop right after a periodic save)
        temporary = final + ".tmp"
        shutil.rmtree(temporary, ignore_errors=True)
        os.makedirs(temporary)
        arrays = {}
        for name, value in self._objects.items():
            state = value.save()
            if _is_json_state(state):
                _write_json(os.path.join(temporary, f"{name}.json"), state)
            else:
                arrays[name] = jax.device_get(state)
        # The replay right after the objects' states, before the slow array write: while other processes insert
        # (a distributed program's actors), the replay is then the closest to the states it was saved with.
        if self._replay_client is not None:
            sizes = replay_sizes(self._replay_client)
            # Reverb writes a complete checkpoint directory (it ends with a DONE file); moving it is one rename.
            shutil.move(self._replay_client.checkpoint(), os.path.join(temporary, REPLAY))
            if self._read_replay_sizes is not None:
                sizes = dict(self._read_replay_sizes(os.path.join(temporary, REPLAY)))
            metadata["replay_sizes"] = sizes
        if arrays:
            ocp, checkpointer = _orbax()
            checkpointer.save(os.path.join(temporary, ARRAYS), args=ocp.args.StandardSave(arrays))
        _write_json(os.path.join(temporary, METADATA), {**self._metadata, **metadata, "step": int(step)})
        _write_manifest(temporary)
        os.rename(temporary, final)
        for old in list_checkpoints(self.directory)[: -self._max_to_keep]:
            shutil.rmtree(old, ignore_errors=True)
        return final

    def restore(self, path: Optional[str] = None, expected_metadata: Optional[Mapping[str, Any]] = None,
                names: Optional[Iterable[str]] = None) -> int:
        """Restores every object (or only those in `names`) from `path` (default: the latest checkpoint) and
        returns its step.

        `expected_metadata` (default: this checkpointer's metadata) must agree with the checkpoint's on every key
        they share, else CheckpointError names the checkpoint and the keys that differ. Nothing is restored then.
        The replay, if any, is not restored here: the Reverb server loads it when it starts.
        """
        path = path or latest_checkpoint(self.directory, explain=True)
        if path is None:
            raise CheckpointError(f"No complete checkpoint in {self.directory}.")
        stored = read_metadata(path)
        expected = self._metadata if expected_metadata is None else dict(expected_metadata)
        check_metadata(path, stored, expected)
        states = {}
        arrays = {}
        restored = self._objects if names is None else {name: self._objects[name] for name in names}
        for name, value in restored.items():
            file_path = os.path.join(path, f"{name}.json")
            if os.path.exists(file_path):
                states[name] = _read_json(file_path)
            else:
                arrays[name] = value.save()  # the current state is the structure to restore into
        if arrays:
            states.update(_restore_arrays(os.path.join(path, ARRAYS), arrays))
        for name, state in states.items():
            self._objects[name].restore(state)
        self._last_save = self._clock()
        return int(stored.get("step", checkpoint_step(path)))


def replay_sizes(replay_client) -> dict:
    """{table: items} of the replay behind `replay_client` (a `reverb.Client`)."""
    return {name: int(info.current_size) for name, info in replay_client.server_info().items()}


def check_metadata(path: str, stored: Mapping[str, Any], expected: Mapping[str, Any]) -> None:
    """CheckpointError naming `path` and every shared key whose values differ between `stored` and `expected`."""
    differences = [
        f"{key}: checkpoint has {stored[key]!r}, this run has {expected[key]!r}"
        for key in expected
        if key in stored and key != "step" and _canonical(stored[key]) != _canonical(expected[key])
    ]
    if differences:
        raise CheckpointError(
            f"The checkpoint {path} belongs to a different run (" + "; ".join(differences) + "). "
            "Resume with the run's own agent and config, or start a new run directory."
        )


def _canonical(value: Any) -> Any:
    return json.loads(json.dumps(value))  # tuples and lists compare equal, as they do after a JSON round trip


def _restore_arrays(path: str, target: Mapping[str, Any]) -> dict:
    ocp, checkpointer = _orbax()
    path = os.path.abspath(path)  # orbax accepts absolute paths only
    if not os.path.isdir(path):
        raise CheckpointError(f"Checkpoint directory {path} is missing: the checkpoint is incomplete.")
    target = jax.tree_util.tree_map(np.asarray, dict(target))
    try:
        return checkpointer.restore(path, args=ocp.args.StandardRestore(target))
    except Exception as error:  # orbax raises many types (ValueError, KeyError, tensorstore errors)
        raise CheckpointError(
            f"Could not read the arrays of checkpoint {path} ({type(error).__name__}: {error}). The files are "
            "corrupt, or were written by a different agent or network size."
        ) from error
