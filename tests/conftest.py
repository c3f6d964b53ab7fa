"""Shared pytest setup.

tfp's JAX substrate (rlax -> distrax -> tfp) must load before TensorFlow, or with TensorFlow hidden: this
makes sure it does whatever order test modules import things in. See acmelike/_jax_probability.py.
XLA runs single-threaded (below).
"""

import os

# XLA's CPU thread pools, on the 2-core machines CI runs on, compete with the test's own threads (the actor loop,
# Reverb, Launchpad nodes): single-threaded XLA is faster there. Set before JAX starts its backend; subprocesses
# the tests start inherit it. An XLA_FLAGS of the caller's own wins.
os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1")

from acmelike import _jax_probability  # noqa: E402,F401
