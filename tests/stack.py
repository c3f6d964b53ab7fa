"""Which stack the tests run on, and how tests that need Reverb/Launchpad/TensorFlow say so.

`make test` (full stack) sets ACMELIKE_FULL_STACK=1: there a missing package is an error, never a skip.
`make test-latest` (Python 3.12+, no TensorFlow) skips such tests with a reason naming the missing package.
"""

import importlib
import os

import pytest

FULL_STACK = os.environ.get("ACMELIKE_FULL_STACK") == "1"


# Packages of the latest stack only (they need Python >= 3.11): on the full stack their tests skip.
LATEST_STACK_ONLY = ("jaxmarl",)


def require(package: str):
    """Imports and returns `package`, or skips the calling test module naming it (fails on the full stack, unless
    the package is one of `LATEST_STACK_ONLY`)."""
    try:
        return importlib.import_module(package)
    except ImportError as error:
        if package in LATEST_STACK_ONLY:
            pytest.skip(f"needs {package}, which needs Python >= 3.11 (the latest stack): run `make test-latest`",
                        allow_module_level=True)
        if FULL_STACK:
            raise ImportError(f"{package} is part of the full stack but failed to import: {error}") from error
        pytest.skip(
            f"needs {package} (full stack only: Python 3.10 with dm-reverb/dm-launchpad; run `make test`)",
            allow_module_level=True,
        )


# Long tests (learning as a distributed program, slow datasets) are marked `long`: pytest.ini deselects them, and
# `pytest -m long` (or `make test-long`) runs them. CI keeps to one distributed learning run per engine and
# single-process learning for each agent.
long_test = pytest.mark.long

# Tests reading the session fixture `dqn_cartpole_expert` (tests/conftest.py) run on one pytest-xdist worker, which
# trains it once for all of them.
DQN_EXPERT_GROUP = pytest.mark.xdist_group("dqn_cartpole_expert")
