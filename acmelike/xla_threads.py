"""XLA's CPU threading: one thread per computation instead of an Eigen thread pool per process.

XLA reads `XLA_FLAGS` once, when JAX first starts its CPU backend, so these settings go into the environment
before then (or into the environment of a process about to start):

    from acmelike import xla_threads
    xla_threads.use_single_threaded()          # this process and those it starts; a caller's XLA_FLAGS win

Two reasons to choose it, both about small networks on a few cores:
- speed: our agents' computations are too small to gain from a thread pool, and two processes that each spin one
  on two cores slow each other down (benchmarks/step_profile.py measures both settings side by side);
- a hang: XLA's multi-threaded Eigen pool can wedge while a vmapped computation is being fetched (every thread
  idle on a futex, the caller blocked in `device_get`; seen in our test suite on jax 0.10.2, and reported with
  the same stacks by others, who found this flag alone avoids it). The latest stack's tests run with it.
"""

import os
from typing import MutableMapping, Optional

SINGLE_THREADED = "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"


def use_single_threaded(environ: Optional[MutableMapping[str, str]] = None) -> str:
    """Sets `XLA_FLAGS` to `SINGLE_THREADED` in `environ` (default: this process's) unless it is already set.

    Returns the XLA_FLAGS now in force. Has no effect on a JAX backend that has already started.
    """
    environ = os.environ if environ is None else environ
    return environ.setdefault("XLA_FLAGS", SINGLE_THREADED)
