"""Launch: run an agent's builder as one process, or unchanged as a distributed Launchpad program.

    config = ExperimentConfig(builder=DQNBuilder(), environment_factory=..., network_factory=...,
                              max_num_actor_steps=100_000)
    summary = run_single_process(config)
    summary = run_distributed(config, num_actors=2, launch_type="local_mp")
"""

# Load tfp's JAX substrate (rlax) before anything imports TensorFlow: see acmelike._jax_probability.
from acmelike import _jax_probability  # noqa: F401,I001

from launch.distributed import (
    DistributedRunError,
    describe_program,
    make_distributed_program,
    run_distributed,
)
from launch.construction import AgentParts
from launch.experiment import ExperimentConfig
from launch.registry import AGENTS, agent_definition, make_experiment_config
from launch.single_process import run_single_process

__all__ = [
    "AGENTS",
    "AgentParts",
    "agent_definition",
    "DistributedRunError",
    "ExperimentConfig",
    "describe_program",
    "make_distributed_program",
    "make_experiment_config",
    "run_distributed",
    "run_single_process",
]
