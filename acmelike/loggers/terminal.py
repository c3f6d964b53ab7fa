"""TerminalLogger: one compact line per write, at most every `time_delta` seconds."""

import time
from typing import Any, Callable

import numpy as np

from acmelike.loggers.base import LoggingData, to_python


def format_value(value: Any) -> str:
    """Floats to 4 significant digits; arrays element-wise the same way; everything else with str()."""
    value = to_python(value)
    if isinstance(value, float):
        return f"{value:.4g}"
    if isinstance(value, np.ndarray):
        return np.array2string(
            value, separator=", ", threshold=8, formatter={"float_kind": lambda x: f"{x:.4g}"}
        )
    return str(value)


def format_line(label: str, data: LoggingData) -> str:
    """`[label] key = value | key = value`, keys in the order they were given."""
    body = " | ".join(f"{key} = {format_value(value)}" for key, value in data.items())
    return f"[{label}] {body}" if label else body


class TerminalLogger:
    """Prints `[label] key = value | ...`, skipping writes that come less than `time_delta` s after a print.

    Args:
      label: shown in brackets at the start of each line.
      time_delta: minimum seconds between two printed lines (0 prints every write). The first write prints.
      print_fn: where lines go (e.g. `logging.info`).
      clock: seconds as a float, for tests; `time.monotonic` by default.
    """

    def __init__(
        self,
        label: str = "",
        time_delta: float = 0.0,
        print_fn: Callable[[str], Any] = print,
        clock: Callable[[], float] = time.monotonic,
    ):
        self._label = label
        self._time_delta = time_delta
        self._print_fn = print_fn
        self._clock = clock
        self._last_print = None

    def write(self, data: LoggingData) -> None:
        now = self._clock()
        if self._last_print is not None and now - self._last_print < self._time_delta:
            return
        self._last_print = now
        self._print_fn(format_line(self._label, data))

    def close(self) -> None:
        pass
