"""Loggers: where results go. Each has `write(mapping)` and `close()`.

    logger = make_default_logger("actor", directory="runs/0")   # terminal + runs/0/actor.csv
    logger.write({"episode_return": 21.0, "actor_steps": 500})
"""

from typing import Optional

from acmelike.loggers.base import Dispatcher, InMemoryLogger, Logger, LoggingData, NoOpLogger, to_python
from acmelike.loggers.csv import CSVLogger
from acmelike.loggers.plotting import plot_learning_curve
from acmelike.loggers.tensorboard import TensorBoardLogger
from acmelike.loggers.terminal import TerminalLogger


def make_default_logger(label: str, directory: Optional[str] = None, time_delta: float = 1.0) -> Logger:
    """A TerminalLogger (at most one line every `time_delta` s) plus, if `directory` is given, a CSVLogger
    writing every row to `<directory>/<label>.csv`. With `directory=None` nothing is written to disk."""
    terminal = TerminalLogger(label, time_delta=time_delta)
    if directory is None:
        return terminal
    return Dispatcher([terminal, CSVLogger(directory, label)])


__all__ = [
    "CSVLogger",
    "Dispatcher",
    "InMemoryLogger",
    "Logger",
    "LoggingData",
    "NoOpLogger",
    "TensorBoardLogger",
    "TerminalLogger",
    "make_default_logger",
    "plot_learning_curve",
    "to_python",
]
