"""acmelike: an Acme-style, layered framework for reinforcement-learning agents in JAX."""

from setuptools import find_packages, setup

# The pure-JAX layers: networks, losses, learners, actor cores and agents' learning steps.
# mctx: MuZero's tree search (0.0.5 is the newest for Python 3.10; constraints.txt pins it).
# tyro: `python -m launch` parses its command line into the typed tree of launch/cli/options.py.
CORE = ["jax", "jaxlib", "flax", "optax", "rlax", "chex", "dm-env", "gymnasium", "numpy", "matplotlib",
        "orbax-checkpoint", "mctx", "tyro"]
# --launch ray: the program graph as Ray actors (ray 2.48.0 is the newest beside TensorFlow 2.8's protobuf < 3.20;
# today's stack: 2.60.0, constraints-latest.txt).
RAY = ["ray"]
# Replay and launch (Python 3.10 only): pin exact versions through constraints.txt.
FULL = ["tensorflow-cpu", "dm-reverb", "dm-launchpad", "numpy<2"] + RAY
# Optional capabilities, each imported only where it is used.
ANAKIN = ["gymnax"]  # --launch anakin: JAX environments (replay is acmelike.anakin.TrajectoryBuffer)
OFFLINE = ["minari[hdf5]"]  # launch.cli.record and offline agents (--dataset)
TENSORBOARD = ["tensorboardX"]  # --tensorboard, with no TensorFlow needed
# rgb frames of the classic-control environments (launch.cli.evaluate --video). pygame-ce, the drop-in fork, because
# mpe2 requires it and the two install the same `pygame` package.
RENDER = ["pygame-ce"]
MINATAR = ["MinAtar"]  # pixel environments for the conv torsos
# gymnasium's MuJoCo tasks (HalfCheetah-v5, ...): gymnasium[mujoco]'s needs, pinned through the constraints files.
MUJOCO = ["mujoco", "imageio", "packaging"]
# The DeepMind Control Suite (--env dm_control/<domain>-<task>): dm-control brings mujoco, labmaze, lxml and tqdm.
# About 10 s and 250 MB into a venv (2026-11-28), so the tests install it.
DMC = ["dm-control"]
# The results runner's statistics (benchmarks/results_runner/): interquartile means with bootstrap intervals.
RESULTS = ["rliable"]
# The tests check the intervals rliable computes (tests/engines/test_results_runner.py), on today's stack, where
# the results runner runs.
RESULTS_TODAY = ['rliable; python_version >= "3.11"']
# Multi-agent environments: PettingZoo's Parallel API and the MPE tasks (simple_spread_v3, ...).
MULTIAGENT = ["pettingzoo", "mpe2"]
# JaxMARL's MPE for multi-agent --launch anakin: Python 3.11+ only (constraints-latest.txt pins it).
MULTIAGENT_JAX = ['jaxmarl; python_version >= "3.11"']
# Brax's locomotion tasks for the continuous agents' --launch anakin (--env brax/<task>): brax 0.14.2 requires
# Python >= 3.11, so today's stack only; it brings mujoco-mjx at the pinned mujoco's version. About 4 s and 10 MB
# into a venv that has the test extra (2026-11-29), so the tests install it.
BRAX = ['brax; python_version >= "3.11"']
# MuJoCo Playground's Control Suite tasks in MJX for the continuous agents' --launch anakin (--env playground/<task>):
# Python >= 3.11, so today's stack only. Beside the brax extra it adds mediapy and warp-lang (MuJoCo Warp's
# compiler, a 150 MB wheel that Playground requires; the adapter runs MJX's JAX physics and never calls it).
PLAYGROUND = ['playground; python_version >= "3.11"']
# --launch ray on today's stack (its replay node serves the local tables), which the tests run programs on; the
# classic stack's Ray comes with FULL.
RAY_TODAY = ['ray; python_version >= "3.11"']
# JAX with CUDA 12 (`pip install -e ".[cuda]"`, today's stack): the plugin wheels bring their own CUDA libraries
# (some GB of nvidia-* wheels), so a machine needs only an NVIDIA driver. Learners, central inference and Anakin
# then run on the GPU (acmelike/placement.py).
CUDA = ['jax[cuda12]; python_version >= "3.11"']
# pytest-xdist: `make test` runs on every core (tests/conftest.py shares one compilation cache between workers).
TEST = (["pytest", "pytest-xdist", "psutil", "hypothesis"] + ANAKIN + OFFLINE + TENSORBOARD + RENDER + MINATAR
        + MULTIAGENT + MULTIAGENT_JAX + DMC + RAY_TODAY + BRAX + PLAYGROUND + RESULTS_TODAY)
# Running notebooks/ (`make notebook`; `make test` runs them on a short budget).
NOTEBOOK = ["jupyter", "ipykernel"]
# The documentation site (`make docs`): mkdocs-material, and mkdocstrings reading docstrings by static analysis
# (griffe), so building it imports nothing of ours (no Reverb or TensorFlow).
DOCS = ["mkdocs", "mkdocs-material", "mkdocstrings[python]", "pymdown-extensions"]

setup(
    name="acmelike",
    version="0.1.0",
    description=__doc__,
    packages=find_packages(include=["acmelike*", "agents*", "environment_loops*", "launch*"]),
    # --preset NAME reads launch/presets/NAME.json; runs compile engines/bind_address.c on first use (a C compiler,
    # not a build step: launch/engines/bind_address.py)
    package_data={"launch": ["presets/*.json", "engines/bind_address.c"]},
    python_requires=">=3.10",
    install_requires=CORE,
    extras_require={
        "full": FULL,
        "test": TEST,
        "notebook": NOTEBOOK,
        "docs": DOCS,
        "anakin": ANAKIN,
        "offline": OFFLINE,
        "tensorboard": TENSORBOARD,
        "cuda": CUDA,
        "render": RENDER,
        "minatar": MINATAR,
        "mujoco": MUJOCO,
        "dmc": DMC,
        "results": RESULTS,
        "ray": RAY,
        "multiagent": MULTIAGENT + MULTIAGENT_JAX,
        "brax": BRAX,
        "playground": PLAYGROUND,
    },
)
