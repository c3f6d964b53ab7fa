"""CSVLogger: one row per write in `<directory>/<label>.csv`."""

import csv
import os
import sys
from typing import Any

import numpy as np

from acmelike import files
from acmelike.loggers.base import LoggingData, to_python


def _cell(value: Any) -> Any:
    value = to_python(value)
    if isinstance(value, np.ndarray):
        return np.array2string(value, separator=" ", threshold=sys.maxsize, max_line_width=sys.maxsize)
    return value


class CSVLogger:
    """Writes each `write(data)` as a row of `<directory>/<label>.csv`, flushed at once.

    Columns: the keys of the first row, in its order. A key first seen in a later row becomes a new last column:
    the file is rewritten once with the wider header and earlier rows get empty cells for it. Keys missing from
    a row leave empty cells. So the file is always a valid CSV with one header, readable by `csv.DictReader`
    or pandas, and column order is stable. Floats are written at full precision.

    Args:
      directory: created if missing.
      label: the file name without `.csv`.
      append: if True and the file exists, continue it (adopting its header), e.g. after a restart;
        if False (default) start a new file.
    """

    def __init__(self, directory: str, label: str = "logs", append: bool = False):
        os.makedirs(directory, exist_ok=True)
        self.file_path = os.path.join(directory, f"{label}.csv")
        self._fieldnames: list[str] = []
        if append and os.path.exists(self.file_path) and os.path.getsize(self.file_path) > 0:
            with open(self.file_path, newline="") as f:
                self._fieldnames = next(csv.reader(f), [])
        else:
            open(self.file_path, "w").close()
        self._file = open(self.file_path, "a", newline="")
        self._writer = self._make_writer() if self._fieldnames else None

    def _make_writer(self) -> csv.DictWriter:
        return csv.DictWriter(self._file, fieldnames=self._fieldnames, restval="")

    def _widen(self, new_keys: list[str]) -> None:
        """Adds columns: rewrites the file with the wider header, earlier rows padded with empty cells."""
        self._file.close()
        with open(self.file_path, newline="") as f:
            rows = list(csv.DictReader(f))
        self._fieldnames = self._fieldnames + new_keys
        with files.open_whole(self.file_path, newline="") as f:
            writer = csv.DictWriter(f, fieldnames=self._fieldnames, restval="")
            writer.writeheader()
            writer.writerows(rows)
        self._file = open(self.file_path, "a", newline="")
        self._writer = self._make_writer()

    def write(self, data: LoggingData) -> None:
        row = {str(key): _cell(value) for key, value in data.items()}
        if self._writer is None:
            self._fieldnames = list(row)
            self._writer = self._make_writer()
            self._writer.writeheader()
        else:
            new_keys = [key for key in row if key not in self._fieldnames]
            if new_keys:
                self._widen(new_keys)
        self._writer.writerow(row)
        self._file.flush()

    def close(self) -> None:
        if not self._file.closed:
            self._file.close()
