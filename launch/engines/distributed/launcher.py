"""run_distributed: the same builder as a distributed program, on the engine the caller names.

    summary = run_distributed(config, num_actors=2, launch="local_mp")                      # Launchpad, processes
    summary = run_distributed(config, num_actors=2, launch="ray", ray_options=RayOptions(address=...))

Every engine executes one graph (`graph.experiment_graph`) of the same nodes (`nodes`), after the same run-directory
preparation, and reports through the same supervisor (`supervisor`): progress lines, `DistributedRunError` naming
a failed node, and the summary.
"""

import dataclasses
import warnings
from typing import Any, Dict, Optional

from launch.engines.distributed import supervisor
from launch.engines.distributed.launchpad_engine import check_launchpad_bind_address, run_launchpad_program
from launch.engines.distributed.ray_engine import run_ray_program
from launch.experiments.config import ExperimentConfig
from launch.lifecycle.run_directory import RunOptions

DISTRIBUTED = ("local_mt", "local_mp", "ray")  # the --launch values of a distributed program


def run_distributed(
    config: ExperimentConfig,
    num_actors: int,
    launch: str = "local_mp",
    *,
    options: RunOptions = RunOptions(),
    stop_timeout_s: float = 60.0,
    ray_options=None,
    launch_type: Optional[str] = None,
) -> Dict[str, Any]:
    """Launches the program, prints progress, waits for the end, and returns the summary.

    `options` as for `run_single_process`: checkpoints, resume (each node restores its part: see
    `launch.lifecycle.node_checkpoints`), TensorBoard, and the address every node's server listens on
    (`bind_address`: 127.0.0.1 unless given; Launchpad's nodes dial each other at localhost, so local_mt and
    local_mp take 127.0.0.1 or 0.0.0.0 only). A run directory holding another run's checkpoints is
    refused (`CheckpointError`) before anything is written. `ray_options` (`ray_engine.RayOptions`) only with
    `launch="ray"`. `launch_type` is `launch`'s former name, still taken, with a DeprecationWarning.

    Raises `DistributedRunError` naming the node (with its traceback) if any node fails; in every case the
    program is stopped and its processes are gone when this returns. Ctrl-C or SIGTERM checkpoints the run
    (learner, replay, counts), then stops every node.
    """
    if launch_type is not None:
        warnings.warn("run_distributed(launch_type=...) is deprecated: pass launch=..., the --launch flag's name.",
                      DeprecationWarning, stacklevel=2)
        launch = launch_type
    if launch not in DISTRIBUTED:
        raise ValueError(f"Unknown launch {launch!r}. Choose one of: {', '.join(DISTRIBUTED)}.")
    if ray_options is not None and launch != "ray":
        raise ValueError(f"ray_options are for launch='ray', not {launch!r}.")
    # A Launchpad program's nodes share one Reverb server, and its config.json says so. A Ray program's replay node
    # serves the local replay's tables unless the config asks for "reverb" (`graph.experiment_graph`).
    if launch != "ray":
        config = dataclasses.replace(config, replay="reverb")
        check_launchpad_bind_address(options.bind_address)
    config = supervisor.prepare_run_directory(config, options, launch, num_actors)
    if launch == "ray":
        return run_ray_program(config, num_actors, ray_options, stop_timeout_s, options.bind_address)
    return run_launchpad_program(config, num_actors, launch, stop_timeout_s, options.bind_address)
