"""Launch: run an agent's builder as one process, offline, fully jitted, or unchanged as a distributed program.

    config = make_experiment_config(agent="dqn", environment="CartPole-v1", max_num_actor_steps=100_000,
                                    run_dir="runs/dqn")
    summary = train(config, overwrite=True)       # as `python -m launch`: a new run, replacing what runs/dqn held
    summary = train(config, resume=True)          # on from its latest checkpoint (--resume)
    summary = train(config, launch="local_mp", actors=2, overwrite=True)   # the same builder, distributed
    actor = load_actor(config.run_dir)            # with a run_dir: the run's evaluation policy, no learner

`train` takes every option of the command line (`RunOptions`' fields and `overwrite`) and any experiment config:
`agent=` in `make_experiment_config` is a registered name or an `AgentDefinition` of your own, from any script.
`run_single_process`, `run_distributed` and `run_offline` are the engines beneath it (no lock, no overwrite).

Where things live:
    registry.py       the one table of agents (online, offline, Anakin forms)
    cli/              the command line: train (`python -m launch`), evaluate, record
    experiments/      ExperimentConfig, the one construction path (AgentParts), `--config` overrides, summaries
    engines/          single_process, offline, anakin, distributed/ (graph, nodes, supervisor, Launchpad, Ray)
    lifecycle/        a run on disk: its directory, checkpoints, snapshots, logs
"""

import sys

# `python -m launch` (while Python imports the package, sys.argv[0] is "-m" and the module's name precedes the
# arguments): restart once, before anything loads, with the library that keeps the run's servers on --bind-address
# (launch/engines/bind_address.py).
if sys.argv[:1] == ["-m"] and sys.orig_argv[-len(sys.argv)] in ("launch", "-mlaunch"):
    from launch.engines.bind_address import exec_preloaded

    exec_preloaded()

# Load tfp's JAX substrate (rlax) before anything imports TensorFlow: see acmelike._jax_probability.
from acmelike import _jax_probability  # noqa: F401,I001,E402

import importlib  # noqa: E402

# The public names below load on first use (PEP 562), so that `launch.load_actor` or `launch.registry` do not
# import the runners: a snapshot then loads in a process that never builds a learner, replay or program.
_PUBLIC = {
    "AGENTS": "launch.registry",
    "agent_definition": "launch.registry",
    "AgentParts": "launch.experiments.parts",
    "DistributedRunError": "launch.engines.distributed.supervisor",
    "ExperimentConfig": "launch.experiments.config",
    "OfflineExperimentConfig": "launch.experiments.config",
    "make_offline_experiment_config": "launch.experiments.make",
    "run_offline": "launch.engines.offline",
    "describe_program": "launch.engines.distributed.launchpad_engine",
    "load_actor": "launch.lifecycle.snapshots",
    "make_distributed_program": "launch.engines.distributed.launchpad_engine",
    "make_experiment_config": "launch.experiments.make",
    "run_distributed": "launch.engines.distributed.launcher",
    "run_single_process": "launch.engines.single_process",
    "RunOptions": "launch.lifecycle.run_directory",
    "train": "launch.engines.train",
}


def __getattr__(name):
    if name not in _PUBLIC:
        raise AttributeError(f"module 'launch' has no attribute {name!r}")
    return getattr(importlib.import_module(_PUBLIC[name]), name)


__all__ = sorted(_PUBLIC)
