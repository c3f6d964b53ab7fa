"""Nothing read from a run directory chooses code to run: an environment id of the form "module:Env-v0" (which
makes gymnasium import `module`) is refused when it comes from a snapshot's metadata or a run's config.json, and
accepted only as typed on the command line."""

import glob
import json
import os
import zlib

import pytest

from acmelike.wrappers import check_environment_id_from_file
from tests.run_helpers import SMALL_DQN, command_line
from tests.stack import require

PAYLOAD = """
import pathlib
pathlib.Path({marker!r}).write_text("imported")
"""


def test_ids_naming_a_module_are_refused_with_the_source_and_the_way_out():
    check_environment_id_from_file("CartPole-v1", "config.json")
    check_environment_id_from_file("mpe/simple_spread_v3", "config.json")
    with pytest.raises(ValueError, match=r"runs/x/config.json names .*'evil.payload'.*--env evil.payload:CartPole-v1"):
        check_environment_id_from_file("evil.payload:CartPole-v1", "runs/x/config.json")


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory):
    """A short DQN run with a snapshot and a config.json."""
    run_dir = str(tmp_path_factory.mktemp("ids") / "run")
    result = command_line("--agent", "dqn", "--env", "CartPole-v1", "--steps", 400, "--replay", "local",
                          "--run-dir", run_dir, *SMALL_DQN)
    assert result.returncode == 0, result.stderr[-3000:]
    return run_dir


def _plant(tmp_path, monkeypatch, name: str):
    """An importable module `name` that leaves a marker file when imported; returns the marker's path."""
    marker = tmp_path / f"{name}.imported"
    (tmp_path / f"{name}.py").write_text(PAYLOAD.format(marker=str(marker)))
    monkeypatch.syspath_prepend(str(tmp_path))
    return marker


def _rewrite_json(path: str, key: str, value) -> None:
    """Sets `key` in the JSON file at `path`, and, as whoever crafts a directory can, its entry in the manifest of
    sizes and CRC-32s beside it (a snapshot's), so that the file still reads as written."""
    with open(path) as f:
        data = json.load(f)
    data[key] = value
    with open(path, "w") as f:
        json.dump(data, f)
    manifest = os.path.join(os.path.dirname(path), "manifest.json")
    if os.path.exists(manifest):
        with open(manifest) as f:
            entries = json.load(f)
        with open(path, "rb") as f:
            content = f.read()
        entries[os.path.basename(path)] = [len(content), zlib.crc32(content)]
        with open(manifest, "w") as f:
            json.dump(entries, f)


@pytest.mark.parametrize("module", ["launch.cli.evaluate", "launch.cli.record"])
def test_a_snapshot_naming_a_module_is_refused(finished_run, tmp_path, monkeypatch, module):
    name = "acmelike_planted_" + module.rsplit(".", 1)[1]
    marker = _plant(tmp_path, monkeypatch, name)
    (metadata,) = glob.glob(os.path.join(finished_run, "snapshots", "*", "metadata.json"))[-1:]
    original = json.load(open(metadata))["environment"]
    _rewrite_json(metadata, "environment", f"{name}:CartPole-v1")
    try:
        extra = ["--dataset-id", "acmelike-test/never-v0"] if module.endswith("record") else []
        result = command_line(finished_run, "--episodes", 1, *extra, module=module)
    finally:
        _rewrite_json(metadata, "environment", original)
    assert result.returncode == 2, result.stderr[-2000:]
    assert f"would import the Python module '{name}'" in result.stderr
    assert not marker.exists(), "the snapshot's environment id imported its module"


def test_a_config_json_naming_a_module_is_refused_on_resume(finished_run, tmp_path, monkeypatch):
    name = "acmelike_planted_resume"
    marker = _plant(tmp_path, monkeypatch, name)
    config_path = os.path.join(finished_run, "config.json")
    before = {path: open(path, "rb").read() for path in glob.glob(os.path.join(finished_run, "*.csv"))}
    _rewrite_json(config_path, "env", f"{name}:CartPole-v1")
    try:
        result = command_line("--resume", finished_run, "--steps", 800)
    finally:
        _rewrite_json(config_path, "env", "CartPole-v1")
    assert result.returncode == 2, result.stderr[-2000:]
    assert "config.json names the environment" in result.stderr and f"--env {name}:CartPole-v1" in result.stderr
    assert not marker.exists(), "config.json's environment id imported its module"
    assert before == {path: open(path, "rb").read() for path in before}  # nothing touched


def test_the_same_id_typed_on_the_command_line_is_imported(tmp_path, monkeypatch):
    """The refusals above are not an accident of the planted module being unimportable: typed, it imports."""
    name = "acmelike_planted_typed"
    marker = _plant(tmp_path, monkeypatch, name)
    result = command_line("--agent", "dqn", "--env", f"{name}:CartPole-v1", "--steps", 50, "--replay", "local",
                          *SMALL_DQN)
    assert result.returncode == 0, result.stderr[-2000:]
    assert marker.exists()
