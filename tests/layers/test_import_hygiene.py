"""The pure-JAX layers must not import TensorFlow, Reverb or Launchpad (checked in a fresh interpreter)."""

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
]
# Every registered agent's package and learning step (a new agent is checked without editing this file).
PURE_JAX_MODULES += [
    module
    for package in sorted(set(AGENTS.values()))
    for module in [package] + ([f"{package}.learning"] if os.path.exists(package.replace(".", "/") + "/learning.py") else [])
]

_CHECK = """
import importlib, sys
importlib.import_module({module!r})
print(",".join(sorted(name for name in {heavy!r} if name in sys.modules)))
"""


def heavy_modules_imported_by(module: str) -> list:
    """Imports `module` in a new interpreter; returns which of tensorflow/reverb/launchpad it pulled in."""
    result = subprocess.run(
        [sys.executable, "-c", _CHECK.format(module=module, heavy=HEAVY)], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, f"importing {module} failed:\n{result.stderr}"
    out = result.stdout.strip().splitlines()[-1] if result.stdout.strip() else ""
    return [name for name in out.split(",") if name]


@pytest.mark.parametrize("module", PURE_JAX_MODULES)
def test_pure_jax_layer_imports_no_tensorflow_reverb_or_launchpad(module):
    assert heavy_modules_imported_by(module) == [], f"{module} must not import {HEAVY}"


def test_the_check_detects_a_heavy_import():
    # Guards the guard: a module that does import TensorFlow is reported.
    require("reverb")
    assert "tensorflow" in heavy_modules_imported_by("acmelike.replay")


def test_rlax_layers_load_after_tensorflow():
    # tfp 0.25 refuses to load after TensorFlow 2.8; acmelike._jax_probability must make the order irrelevant.
    require("tensorflow")
    code = "import tensorflow, reverb; import acmelike.losses, agents.dqn.learning; print('ok')"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert result.returncode == 0 and result.stdout.strip().endswith("ok"), result.stderr[-2000:]
