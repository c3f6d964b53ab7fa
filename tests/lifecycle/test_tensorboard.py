"""TensorBoardLogger: the event files hold the logged scalars at the steps of the chosen counter."""

import pytest
from stack import require

require("tensorboardX")

from acmelike.loggers import TensorBoardLogger  # noqa: E402
from tests.tensorboard_events import read_scalars  # noqa: E402


def test_event_files_hold_the_logged_scalars(tmp_path):
    logger = TensorBoardLogger(str(tmp_path), "learner", step_key="learner_steps")
    logger.write({"loss": 0.5, "learner_steps": 10, "note": "text", "vector": [1, 2]})
    logger.write({"loss": 0.25, "learner_steps": 20, "nan": float("nan")})
    logger.write({"loss": 0.125})  # no step key: the write count (3)
    logger.close()
    scalars = read_scalars(str(tmp_path / "learner"))
    assert scalars["learner/loss"] == [(10, 0.5), (20, 0.25), (3, 0.125)]
    assert scalars["learner/learner_steps"] == [(10, 10.0), (20, 20.0)]
    assert set(scalars) == {"learner/loss", "learner/learner_steps"}  # strings, arrays and NaN are skipped
