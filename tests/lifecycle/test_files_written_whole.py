"""`acmelike.files`: a write that fails part way (a full disk, data json cannot encode) leaves the old file as it
was and no temporary file; one that succeeds replaces it. The run's own records go through it."""

import csv
import errno
import json
import os

import numpy as np
import pytest

from acmelike import files
from acmelike.loggers.csv import CSVLogger
from launch.experiments.summaries import write_summary


def test_a_write_replaces_the_file(tmp_path):
    path = str(tmp_path / "record.json")
    files.write_json(path, {"step": 1})
    files.write_json(path, {"step": 2})
    assert json.loads(open(path).read()) == {"step": 2}
    assert os.listdir(tmp_path) == ["record.json"]


def test_a_write_that_fails_part_way_leaves_the_old_file(tmp_path):
    path = str(tmp_path / "record.json")
    files.write_json(path, {"step": 1})
    with pytest.raises(TypeError, match="float32"):
        # json writes the opening of the object before it meets the value it cannot encode
        files.write_json(path, {"step": 2, "loss": np.float32(0.5)})
    with pytest.raises(OSError, match="No space left"):
        with files.open_whole(path) as f:
            f.write('{"step": ')
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), path)
    assert json.loads(open(path).read()) == {"step": 1}
    assert os.listdir(tmp_path) == ["record.json"]


def test_a_failed_first_write_leaves_no_file(tmp_path):
    with pytest.raises(RuntimeError):
        with files.open_whole(str(tmp_path / "page.md")) as f:
            f.write("# half a page")
            raise RuntimeError("the render failed")
    assert os.listdir(tmp_path) == []


def test_a_summary_that_cannot_be_encoded_leaves_the_previous_summary(tmp_path):
    write_summary(str(tmp_path), {"agent": "dqn", "failed": False})
    with pytest.raises(TypeError):
        write_summary(str(tmp_path), {"agent": "dqn", "failed": False, "loss": object()})
    assert json.loads((tmp_path / "summary.json").read_text()) == {"agent": "dqn", "failed": False}
    assert sorted(os.listdir(tmp_path)) == ["summary.json"]


def test_a_csv_log_that_gains_a_column_is_rewritten_whole(tmp_path):
    logger = CSVLogger(str(tmp_path), label="learner")
    logger.write({"step": 1, "loss": 0.5})
    logger.write({"step": 2, "loss": 0.25, "grad_norm": 3.0})
    logger.close()
    with open(logger.file_path, newline="") as f:
        rows = list(csv.DictReader(f))
    assert rows == [{"step": "1", "loss": "0.5", "grad_norm": ""},
                    {"step": "2", "loss": "0.25", "grad_norm": "3.0"}]
    assert not os.path.exists(logger.file_path + files.TEMPORARY_SUFFIX)
