"""Shared pytest setup.

tfp's JAX substrate (rlax -> distrax -> tfp) must load before TensorFlow, or with TensorFlow hidden: this
makes sure it does whatever order test modules import things in. See acmelike/_jax_probability.py.

Every test, and every process a test starts, shares one persistent XLA compilation cache
(acmelike/compilation_cache.py): the many tests that build the same agent on the same specs compile it once.
It is a fresh directory per session, removed at the end, unless $ACMELIKE_COMPILATION_CACHE names one to keep.
"""

import atexit
import os
import shutil
import tempfile

from acmelike import _jax_probability  # noqa: F401
from acmelike import compilation_cache

if not os.environ.get(compilation_cache.ENVIRONMENT_VARIABLE):
    _session_cache = tempfile.mkdtemp(prefix="acmelike-test-xla-cache-")
    atexit.register(shutil.rmtree, _session_cache, ignore_errors=True)
    compilation_cache.enable(_session_cache)
else:
    compilation_cache.enable()
