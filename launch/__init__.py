"""Launch: run an agent's builder as one process (and, later, as a distributed program).

    config = ExperimentConfig(builder=DQNBuilder(), environment_factory=..., network_factory=...,
                              max_num_actor_steps=100_000)
    summary = run_single_process(config)
"""

# Load tfp's JAX substrate (rlax) before anything imports TensorFlow: see acmelike._jax_probability.
from acmelike import _jax_probability  # noqa: F401,I001

from launch.experiment import ExperimentConfig
from launch.registry import AGENTS, make_experiment_config
from launch.single_process import run_single_process

__all__ = ["AGENTS", "ExperimentConfig", "make_experiment_config", "run_single_process"]
