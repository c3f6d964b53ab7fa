"""acmelike: an Acme-style, layered framework for reinforcement-learning agents in JAX."""

from setuptools import find_packages, setup

# The pure-JAX layers: networks, losses, learners, actor cores and agents' learning steps.
CORE = ["jax", "jaxlib", "flax", "optax", "rlax", "chex", "dm-env", "gymnasium", "numpy", "matplotlib"]
# Replay and launch (Python 3.10 only): pin exact versions through constraints.txt.
FULL = ["tensorflow-cpu", "dm-reverb", "dm-launchpad", "numpy<2"]
TEST = ["pytest", "psutil"]
# Running notebooks/ (`make notebook`; `make test` runs them on a short budget).
NOTEBOOK = ["jupyter", "ipykernel"]

setup(
    name="acmelike",
    version="0.1.0",
    description=__doc__,
    packages=find_packages(include=["acmelike*", "agents*", "environment_loops*", "launch*"]),
    python_requires=">=3.10",
    install_requires=CORE,
    extras_require={"full": FULL, "test": TEST, "notebook": NOTEBOOK},
)
