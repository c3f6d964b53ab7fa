"""A persistent XLA compilation cache, so that a second run of the same agent pays no compile.

A short run spends much of its wall time compiling: PPO's update and initialisation take 14 s of a 25 s CartPole
run on a 2-core CPU (benchmarks/README.md, step profile). JAX can keep compiled executables on disk, keyed by
the computation, its compile options, the JAX/XLA version and the device, and load them in the next process
that builds the same computation. Two settings matter beyond the directory: JAX caches only compilations that
took over one second by default, and an agent's initialisation is many small ones, so the threshold goes to 0.

    from acmelike import compilation_cache
    compilation_cache.enable("~/.cache/acmelike/jax")   # before the first jit; returns the directory

`python -m launch` enables it for every run (`--compilation-cache DIR`, or `off`); the default directory is
`$ACMELIKE_COMPILATION_CACHE`, else `$XDG_CACHE_HOME/acmelike/jax`, else `~/.cache/acmelike/jax`. The settings
are also exported as JAX's environment variables, so that processes the run starts (Launchpad's local_mp nodes,
Ray workers on this machine) use the same cache. The cache is not bounded and not locked: an entry another
process is still writing reads as damaged, and JAX then warns and compiles (`jax_raise_persistent_cache_errors`
is off by default). Delete the directory to reclaim its space. A cached executable is the one XLA would compile again: a run
that loads it computes bit for bit what a run that compiles it does.
"""

import os
from typing import Optional

import jax

ENVIRONMENT_VARIABLE = "ACMELIKE_COMPILATION_CACHE"
OFF = "off"

# JAX reads each of its config options from the upper-cased environment variable at import.
_SETTINGS = (
    ("jax_persistent_cache_min_compile_time_secs", 0.0),
    ("jax_persistent_cache_min_entry_size_bytes", -1),  # cache every size; -1 also stops backends overriding it
)


def default_directory() -> str:
    """`$ACMELIKE_COMPILATION_CACHE`, else `$XDG_CACHE_HOME/acmelike/jax`, else `~/.cache/acmelike/jax`."""
    if os.environ.get(ENVIRONMENT_VARIABLE):
        return os.environ[ENVIRONMENT_VARIABLE]
    cache_home = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(cache_home, "acmelike", "jax")


def enable(directory: Optional[str] = None) -> Optional[str]:
    """Keeps compiled executables in `directory` (default: `default_directory()`) from now on, in this process
    and in the processes it starts. `"off"` (or `$ACMELIKE_COMPILATION_CACHE=off`) leaves JAX as it is.

    Returns the absolute directory, or None when off. Raises ValueError, naming the directory, if it cannot be
    created or written.
    """
    directory = default_directory() if directory is None else directory
    if directory == OFF:
        return None
    directory = os.path.abspath(os.path.expanduser(directory))
    try:
        os.makedirs(directory, exist_ok=True)
        writable = os.access(directory, os.W_OK | os.X_OK)
    except OSError as error:
        raise ValueError(f"compilation cache {directory}: cannot create it ({error}); choose another directory "
                         f"or 'off'.") from None
    if not writable:
        raise ValueError(f"compilation cache {directory}: not writable; choose another directory or 'off'.")
    for name, value in (("jax_compilation_cache_dir", directory),) + _SETTINGS:
        jax.config.update(name, value)
        os.environ[name.upper()] = str(value)
    os.environ[ENVIRONMENT_VARIABLE] = directory
    return directory
