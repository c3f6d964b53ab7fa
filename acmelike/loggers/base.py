"""The Logger protocol and the loggers that only route data: Dispatcher, NoOpLogger, InMemoryLogger."""

from typing import Any, Iterable, Mapping, Protocol, runtime_checkable

import numpy as np

LoggingData = Mapping[str, Any]


@runtime_checkable
class Logger(Protocol):
    """Receives one flat mapping of named values per call (e.g. one episode's results, one learner step)."""

    def write(self, data: LoggingData) -> None:
        ...

    def close(self) -> None:
        ...


def to_python(value: Any) -> Any:
    """Turns NumPy/JAX scalars and 0-d arrays into Python numbers; other arrays into NumPy arrays."""
    if isinstance(value, (int, float, str, bool)) or value is None:
        return value
    if hasattr(value, "shape") and hasattr(value, "dtype"):  # np.ndarray, np.generic, jax.Array
        array = np.asarray(value)
        return array.item() if array.ndim == 0 else array
    return value


class NoOpLogger:
    """Drops everything."""

    def write(self, data: LoggingData) -> None:
        pass

    def close(self) -> None:
        pass


class InMemoryLogger:
    """Keeps every write as a dict in `self.data` (for notebooks and tests)."""

    def __init__(self):
        self.data: list[dict] = []

    def write(self, data: LoggingData) -> None:
        self.data.append(dict(data))

    def close(self) -> None:
        pass


class Dispatcher:
    """Writes to several loggers, in order; `close` closes them all."""

    def __init__(self, loggers: Iterable[Logger]):
        self._loggers = list(loggers)

    def write(self, data: LoggingData) -> None:
        for logger in self._loggers:
            logger.write(data)

    def close(self) -> None:
        for logger in self._loggers:
            logger.close()
