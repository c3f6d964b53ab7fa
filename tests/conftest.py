"""Shared pytest setup.

tfp's JAX substrate (rlax -> distrax -> tfp) must load before TensorFlow, or with TensorFlow hidden: this
makes sure it does whatever order test modules import things in. See acmelike/_jax_probability.py.

Every test, and every process a test starts, shares one persistent XLA compilation cache
(acmelike/compilation_cache.py): the many tests that build the same agent on the same specs compile it once.
It is a fresh directory per session, removed at the end, unless $ACMELIKE_COMPILATION_CACHE names one to keep.
Under pytest-xdist the controller creates it before starting its workers, which inherit it through the environment.

Trained runs that several tests read are session fixtures here, trained once per test process.
"""

import atexit
import os
import shutil
import tempfile

import pytest

from acmelike import _jax_probability  # noqa: F401
from acmelike import compilation_cache

if not os.environ.get(compilation_cache.ENVIRONMENT_VARIABLE):
    _session_cache = tempfile.mkdtemp(prefix="acmelike-test-xla-cache-")
    atexit.register(shutil.rmtree, _session_cache, ignore_errors=True)
    compilation_cache.enable(_session_cache)
else:
    compilation_cache.enable()


@pytest.fixture(scope="session")
def dqn_cartpole_expert(tmp_path_factory):
    """(run directory, summary) of DQN trained on CartPole-v1 to a 20-episode average of 490: seed 0, on the seeded
    local replay, so the same run every time. The DQN learning test checks it; the offline tests record its expert
    episodes. Tests reading it carry `stack.DQN_EXPERT_GROUP`, so that one pytest-xdist worker trains it once."""
    from stack import require

    require("reverb")
    from launch import make_experiment_config, run_single_process

    run_dir = tmp_path_factory.mktemp("dqn-cartpole-expert") / "run"
    config = make_experiment_config(
        agent="dqn", environment="CartPole-v1", max_num_actor_steps=100_000, seed=0, run_dir=str(run_dir),
        stop_at_average_return=490.0, progress_period_s=30.0, replay="local",
    )
    return run_dir, run_single_process(config)
