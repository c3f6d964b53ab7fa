"""Shared pytest setup.

tfp's JAX substrate (rlax -> distrax -> tfp) must load before TensorFlow, or with TensorFlow hidden: this
makes sure it does whatever order test modules import things in. See acmelike/_jax_probability.py.

Every test, and every process a test starts, shares one persistent XLA compilation cache
(acmelike/compilation_cache.py): the many tests that build the same agent on the same specs compile it once.
It is a fresh directory per session, removed at the end, unless $ACMELIKE_COMPILATION_CACHE names one to keep.
Under pytest-xdist the controller creates it before starting its workers, which inherit it through the environment.

On the latest stack (jax >= 0.7) every test, and every process a test starts, runs XLA single-threaded on the CPU
(acmelike/xla_threads.py) unless $XLA_FLAGS is already set: there, XLA's Eigen thread pool twice hung a test run
(every thread idle on a futex, the test blocked fetching a vmapped result), once with one pytest process and once
with two. Retested on jax 0.12.0.1 (Python 3.12, 2026-11-28): one whole run with the pool
(XLA_FLAGS=--xla_cpu_multi_thread_eigen=true) passed without a hang, 893 passed in 449 s against 460 s
single-threaded; one run cannot rule the hang out and the pool gains nothing here, so the tests keep one thread.
The full stack's jax 0.6 never hung, and keeps XLA's thread pool: `make test` runs in one process there,
and the pool lets a learning run use both cores. (Its learning tests' thresholds were measured with the pool; XLA's
threading changes the order of floating-point sums, so a seeded run takes another path without it.)

Trained runs that several tests read are session fixtures here, trained once per test process.
"""

import atexit
import importlib.metadata
import os
import shutil
import tempfile

import pytest

from acmelike import xla_threads

# Before JAX starts its backend (importing jax does not start it).
if tuple(int(part) for part in importlib.metadata.version("jax").split(".")[:2]) >= (0, 7):
    xla_threads.use_single_threaded()

from acmelike import _jax_probability  # noqa: E402,F401
from acmelike import compilation_cache  # noqa: E402

if not os.environ.get(compilation_cache.ENVIRONMENT_VARIABLE):
    _session_cache = tempfile.mkdtemp(prefix="acmelike-test-xla-cache-")
    atexit.register(shutil.rmtree, _session_cache, ignore_errors=True)
    compilation_cache.enable(_session_cache)
else:
    compilation_cache.enable()


@pytest.fixture
def packages_present(monkeypatch):
    """Every optional package counts as installed (`launch.cli.packages`), for tests of what the command line makes
    of a mode or flag on a stack that could not run it: they stop before running, or stub the runner. Whether a
    missing package is refused is tests/engines/test_missing_packages.py's to check."""
    from launch.cli import packages

    monkeypatch.setattr(packages, "installed", lambda module: True)


@pytest.fixture(scope="session")
def dqn_cartpole_expert(tmp_path_factory):
    """(run directory, summary) of DQN trained on CartPole-v1 to a 20-episode average of 490: seed 0, on the seeded
    local replay, so the same run every time. The DQN learning test checks it; the offline tests record its expert
    episodes. Tests reading it carry `stack.DQN_EXPERT_GROUP`, so that one pytest-xdist worker trains it once."""
    from launch import make_experiment_config, run_single_process

    run_dir = tmp_path_factory.mktemp("dqn-cartpole-expert") / "run"
    config = make_experiment_config(
        agent="dqn", environment="CartPole-v1", max_num_actor_steps=100_000, seed=0, run_dir=str(run_dir),
        stop_at_average_return=490.0, progress_period_s=30.0, replay="local",
    )
    return run_dir, run_single_process(config)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    """Tells `stack.require` which test is running (before any fixture of it is set up, module-scoped ones too): a
    classic package is refused to a test not marked classic."""
    import stack

    stack.current_test = item


@pytest.fixture(autouse=True)
def _no_program_outlives_its_test():
    """A test that fails while its program runs (a timeout, an assertion before the end) would leave the program
    running, taking the CPU from the tests after it: its launcher and every process under it are killed here."""
    yield
    from program_launcher import kill_the_still_running

    kill_the_still_running()


def pytest_collection_modifyitems(config, items):
    """The learning runs (a minute or more each) go first. pytest-xdist hands tests out in this order: started
    early, they spread over the workers; left last (tests/learning sorts after most directories), one worker was
    still running them minutes after the other had finished."""
    items.sort(key=lambda item: item.path.parent.name != "learning")
