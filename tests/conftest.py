"""Shared pytest setup.

tfp's JAX substrate (rlax -> distrax -> tfp) must load before TensorFlow, or with TensorFlow hidden: this
makes sure it does whatever order test modules import things in. See acmelike/_jax_probability.py.
"""

from acmelike import _jax_probability  # noqa: F401
