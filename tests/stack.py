"""Which stack the tests run on, and how a test that needs the classic stack says so.

Two stacks run the tests (README.md):
- today's stack, Python 3.12+ (`make test`): every test not marked `classic`;
- the classic stack, Python 3.10 with dm-reverb, dm-launchpad and TensorFlow 2.8 (`make test-launchpad`): the tests
  marked `classic`, which are the ones that need one of those packages. It sets ACMELIKE_CLASSIC_STACK=1, and there a
  classic package that fails to import is an error, never a skip.

A test needing Reverb, Launchpad or TensorFlow carries the `classic` marker (`@pytest.mark.classic`, or
`pytestmark = pytest.mark.classic` above a module-level `require`) and calls `require`. `require` refuses a
classic package to an unmarked caller on either stack: a test that needs the classic stack but is not marked would
run on neither (one stack deselects it, the other cannot import what it needs).
"""

import importlib
import importlib.util
import os
import sys

import pytest

CLASSIC_STACK = os.environ.get("ACMELIKE_CLASSIC_STACK") == "1"

# What only the classic stack has: no wheels for Python 3.12 (dm-reverb, dm-launchpad) or none beside jax 0.12.
CLASSIC_ONLY = ("reverb", "launchpad", "tensorflow")
# What only today's stack has (Python >= 3.11): on the classic stack their tests are not selected anyway.
TODAY_ONLY = ("jaxmarl", "brax", "mujoco_playground")

classic = pytest.mark.classic

# The test running now (set by tests/conftest.py's autouse fixture), for `require` called inside a test.
current_test = None


def _marked_classic(caller_globals) -> bool:
    """Whether the caller is a test module marked classic, or code running for a test marked classic."""
    marks = caller_globals.get("pytestmark", [])
    marks = marks if isinstance(marks, (list, tuple)) else [marks]
    if any(getattr(mark, "name", None) == "classic" for mark in marks):
        return True
    return current_test is not None and current_test.get_closest_marker("classic") is not None


def require(package: str):
    """Imports and returns `package`, or skips the calling test (or module) naming it.

    A classic-stack package (`CLASSIC_ONLY`) may be required only by a test marked `classic`; on the classic stack it
    must import. Any other package the stack lacks skips with the extra that installs it."""
    if package in CLASSIC_ONLY and not _marked_classic(sys._getframe(1).f_globals):
        raise RuntimeError(
            f"require({package!r}) from a test not marked classic: {package} exists only on the classic stack "
            "(Python 3.10), whose `make test-launchpad` runs only tests marked classic. Mark the test "
            "`@pytest.mark.classic` (or the module `pytestmark = pytest.mark.classic`), or make it run without "
            f"{package}."
        )
    try:
        return importlib.import_module(package)
    except ImportError as error:
        if package in CLASSIC_ONLY:
            if CLASSIC_STACK:
                raise ImportError(f"{package} is part of the classic stack but failed to import: {error}") from error
            pytest.skip(f"needs {package}: the classic stack only (Python 3.10), `make test-launchpad`",
                        allow_module_level=True)
        if package in TODAY_ONLY:
            pytest.skip(f"needs {package}, which needs Python >= 3.11: `make test`", allow_module_level=True)
        pytest.skip(f"needs {package}, an optional package: pip install -e '.[test]'", allow_module_level=True)


def require_installed(package: str) -> None:
    """Skips the calling test unless `package` is installed, without importing it into this process: Ray reads its
    token-authentication setting once, when first imported, so the tests that start Ray here import it themselves,
    after the engine has set that up (tests/engines/test_ray_replay.py); an earlier import would leave this process
    without the token its cluster requires."""
    if importlib.util.find_spec(package) is None:
        pytest.skip(f"needs {package}, an optional package: pip install -e '.[test]'")


# Long tests (learning as a distributed program, slow datasets) are marked `long`: pytest.ini deselects them, and
# `pytest -m long` (or `make test-long`) runs them. CI keeps to one distributed learning run per engine and
# single-process learning for each agent.
long_test = pytest.mark.long

# Tests reading the session fixture `dqn_cartpole_expert` (tests/conftest.py) run on one pytest-xdist worker, which
# trains it once for all of them.
DQN_EXPERT_GROUP = pytest.mark.xdist_group("dqn_cartpole_expert")
