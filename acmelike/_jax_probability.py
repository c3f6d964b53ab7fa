"""Imports TensorFlow Probability's JAX substrate (rlax -> distrax -> tfp) without loading TensorFlow.

tfp's JAX backend tries `import tensorflow` only to copy docstrings, so wherever TensorFlow is installed (the
full stack) a plain `import rlax` loads all of TensorFlow (~1.5 s, ~0.5 GB) into pure-JAX code, and fails
outright if TensorFlow 2.8 was imported first (tfp 0.25 refuses it). Hiding TensorFlow for this one import
makes tfp skip the docstrings and nothing else, and makes the import order of rlax and TensorFlow irrelevant.
Every acmelike module that leads to rlax imports this module first.
"""

import sys

_SUBSTRATE = "tensorflow_probability.substrates.jax"


def _import_substrate_without_tensorflow() -> None:
    if _SUBSTRATE in sys.modules:
        return
    missing = object()
    saved = sys.modules.get("tensorflow", missing)
    sys.modules["tensorflow"] = None  # makes `import tensorflow...` raise ImportError
    try:
        __import__(_SUBSTRATE)
    finally:
        if saved is missing:
            del sys.modules["tensorflow"]
        else:
            sys.modules["tensorflow"] = saved


_import_substrate_without_tensorflow()
