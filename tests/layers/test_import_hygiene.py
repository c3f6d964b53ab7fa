"""The pure-JAX layers, and the replay a single-process run uses, must not import TensorFlow, Reverb or Launchpad.

All modules are checked in one fresh interpreter, where an import hook refuses the heavy packages and records who
asked for them. A refused import is not cached, so every module that reaches a heavy package, directly or through
another of ours, is caught on its own, whatever order the modules are imported in. (One interpreter per module
gave the same answers, at 6 s of start-up each, 3 minutes a stack.)
"""

import functools
import json
import os
import subprocess
import sys

import pytest
from stack import require

from launch.registry import AGENTS

HEAVY = ("tensorflow", "reverb", "launchpad")
PURE_JAX_MODULES = [
    "acmelike",
    "acmelike.networks",
    "acmelike.losses",
    "acmelike.learners",
    "acmelike.actors",
    "acmelike.adders",
    "acmelike.variables",
    "acmelike.builders",
    # Replay described without Reverb, and the local replay: only `acmelike.replay.reverb_tables` imports Reverb.
    "acmelike.replay",
    "acmelike.replay.tables",
    "acmelike.replay.local",
]
# Every registered agent's package, learning step and fully jitted form (a new agent is checked without editing
# this file), and the fully jitted runner, which must run where Reverb and TensorFlow are not installed.
PURE_JAX_MODULES += [
    f"{package}{part}"
    for package in sorted(set(AGENTS.values()))
    for part in ("", ".learning", ".anakin")
    if not part or os.path.exists(package.replace(".", "/") + f"/{part[1:]}.py")
] + ["launch.engines.anakin"]

_CHECK = """
import importlib, importlib.abc, json, sys

HEAVY = {heavy!r}
asked = []


class RefuseHeavy(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in HEAVY:
            asked.append(name.split(".")[0])
            raise ImportError(f"{{name}} is refused by the import check")
        return None


sys.meta_path.insert(0, RefuseHeavy())
found = {{}}
for module in {modules!r}:
    del asked[:]
    try:
        importlib.import_module(module)
        error = None
    except ImportError as refused:
        error = str(refused)
    found[module] = {{"heavy": sorted(set(asked)), "error": error}}
print(json.dumps(found))
"""


def heavy_modules_imported_by(*modules: str) -> dict:
    """{module: the heavy packages importing it asked for}, from one new interpreter that refuses them."""
    result = subprocess.run(
        [sys.executable, "-c", _CHECK.format(modules=list(modules), heavy=HEAVY)],
        capture_output=True, text=True, check=False,
    )
    assert result.returncode == 0, f"the import check failed:\n{result.stderr[-5000:]}"
    found = json.loads(result.stdout.strip().splitlines()[-1])
    unexplained = {module: entry["error"] for module, entry in found.items() if entry["error"] and not entry["heavy"]}
    assert not unexplained, f"these modules failed to import: {unexplained}"
    return {module: entry["heavy"] for module, entry in found.items()}


@functools.lru_cache(maxsize=None)
def _pure_jax_imports() -> dict:
    return heavy_modules_imported_by(*PURE_JAX_MODULES)


@pytest.mark.parametrize("module", PURE_JAX_MODULES)
def test_pure_jax_layer_imports_no_tensorflow_reverb_or_launchpad(module):
    assert _pure_jax_imports()[module] == [], f"{module} must not import {HEAVY}"


@pytest.mark.classic
def test_the_check_detects_a_heavy_import():
    # Guards the guard: a module that does import Reverb is reported, and so is one checked later that imports
    # it again (a refused import is not cached), while a pure module checked between them is not.
    require("reverb")
    found = heavy_modules_imported_by("acmelike.replay.reverb_tables", "acmelike.losses", "reverb")
    assert "reverb" in found["acmelike.replay.reverb_tables"] and "reverb" in found["reverb"], found
    assert found["acmelike.losses"] == [], found


@pytest.mark.classic
def test_rlax_layers_load_after_tensorflow():
    # tfp 0.25 refuses to load after TensorFlow 2.8; acmelike._jax_probability must make the order irrelevant.
    require("tensorflow")
    code = "import tensorflow, reverb; import acmelike.losses, agents.dqn.learning; print('ok')"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert result.returncode == 0 and result.stdout.strip().endswith("ok"), result.stderr[-2000:]
