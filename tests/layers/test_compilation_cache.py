"""acmelike.compilation_cache: a second process that builds the same computation loads it instead of compiling.

Each check runs in a fresh interpreter: the test session's own cache (tests/conftest.py) must stay as it is.
"""

import json
import os
import subprocess
import sys

import pytest

from acmelike import compilation_cache
from run_helpers import environment

_PROGRAM = """
import json, sys
import jax, jax.numpy as jnp
from jax._src import monitoring
from acmelike import compilation_cache
hits = []
monitoring.register_event_listener(lambda event, **kw: hits.append(event) if "cache_hits" in event else None)
directory = compilation_cache.enable(sys.argv[1])
jax.jit(lambda x: jnp.tanh(x @ x.T).sum())(jnp.ones((8, 8))).block_until_ready()
print(json.dumps({"directory": directory, "hits": len(hits)}))
"""


def _run(directory):
    env = environment()
    env.pop(compilation_cache.ENVIRONMENT_VARIABLE, None)
    env = {name: value for name, value in env.items() if not name.startswith("JAX_")}
    done = subprocess.run([sys.executable, "-c", _PROGRAM, directory], capture_output=True, text=True, env=env,
                          timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_a_second_process_loads_what_the_first_compiled(tmp_path):
    cache = tmp_path / "cache"
    first = _run(str(cache))
    assert first == {"directory": str(cache), "hits": 0}
    assert os.listdir(cache), "nothing was written to the cache"
    assert _run(str(cache))["hits"] >= 1


def test_off_leaves_jax_as_it_is(tmp_path):
    assert _run(compilation_cache.OFF) == {"directory": None, "hits": 0}


def test_an_unwritable_directory_is_an_error_naming_it(tmp_path):
    blocked = tmp_path / "file"
    blocked.write_text("not a directory")
    with pytest.raises(ValueError, match=f"compilation cache {blocked}/cache: cannot create it"):
        compilation_cache.enable(str(blocked / "cache"))
