"""TensorBoardLogger: each write's numbers as TensorBoard scalars, through tensorboardX (no TensorFlow needed).

    logger = TensorBoardLogger("runs/0/tensorboard", "learner", step_key="learner_steps")
    logger.write({"loss": 0.3, "learner_steps": 100})   # -> scalar "learner/loss" at step 100

    tensorboard --logdir runs/0/tensorboard
"""

import atexit
import math
import numbers
import os
from typing import Optional

import numpy as np

from acmelike.loggers.base import LoggingData, to_python


class TensorBoardLogger:
    """Writes every finite numeric value of each `write(data)` as the scalar `<label>/<key>`.

    Args:
      directory: the event files' directory (one per label: `<directory>/<label>/`), created if missing.
      label: prefixes the tags and names the sub-directory, e.g. "actor", "learner", "evaluator".
      step_key: the key of `data` giving the x-axis (e.g. "actor_steps"); rows without it (or with
        `step_key=None`) use the number of writes so far. The step value itself is also logged.
      flush_every_s: seconds between flushes of the event file (tensorboardX flushes on `close()` too).
      purge_step: for a run resumed from a checkpoint taken at step T, T + 1: the new event file starts with a
        session START at this step, and TensorBoard then hides every event of the directory's earlier files at
        this step or later (what the killed run logged after its checkpoint), so steps never go backwards.

    Arrays and strings are skipped: a scalar dashboard is what this is for. Rows are flushed by tensorboardX's
    background writer at most every `flush_every_s`, so a killed run loses at most that much.
    """

    def __init__(self, directory: str, label: str, step_key: Optional[str] = None, flush_every_s: float = 10.0,
                 purge_step: Optional[int] = None):
        from tensorboardX import SummaryWriter  # imported here: the loggers package needs no tensorboardX

        self.directory = os.path.join(directory, label)
        self._label = label
        self._step_key = step_key
        self._writes = 0
        # One event file per process (the pid in its name): a resumed run never reopens a file of the run it
        # continues, even within the same second.
        self._writer = SummaryWriter(logdir=self.directory, flush_secs=max(1, int(round(flush_every_s))),
                                     purge_step=purge_step, filename_suffix=f".{os.getpid()}")
        atexit.register(self.close)  # runners need not close loggers: what a clean exit logged reaches the file

    def write(self, data: LoggingData) -> None:
        self._writes += 1
        step = self._writes
        if self._step_key is not None and self._step_key in data:
            step = int(to_python(data[self._step_key]))
        for key, value in data.items():
            value = to_python(value)
            if isinstance(value, bool) or not isinstance(value, numbers.Real) or isinstance(value, np.ndarray):
                continue
            if math.isfinite(value):
                self._writer.add_scalar(f"{self._label}/{key}", float(value), global_step=step)

    def flush(self) -> None:
        self._writer.flush()

    def close(self) -> None:
        self._writer.close()
