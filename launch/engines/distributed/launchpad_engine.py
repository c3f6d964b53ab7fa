"""Launchpad as an engine of the program graph: `make_distributed_program` turns the graph into a Launchpad program.

    program = make_distributed_program(config, num_actors=2)
    print(describe_program(program))                 # what will launch
    summary = run_launchpad_program(config, 2, "local_mp", stop_timeout_s=60)   # via launcher.run_distributed

The nodes come from `launch.engines.distributed.graph` (the engine-neutral description Ray executes too): replay (a ReverbNode
with the builder's tables, inserts may block), counter (a Counter), learner (dataset from replay, serves
get_variables), inference (only with `config.inference == "central"`: serves every actor's policy in dynamic
batches), actor (one per actor, each an EnvironmentLoop writing to replay), evaluator, steps_limiter (ends
the program at the actor-step budget); every other node is a CourierNode.
"""

import os
import threading
import time
from typing import Any, Dict, Optional

from launch.engines.distributed import supervisor
from launch.engines.distributed.graph import REPLAY, Ref, experiment_graph
from launch.experiments.config import ExperimentConfig
from launch.experiments.interrupts import StopRequests


def make_distributed_program(config: ExperimentConfig, num_actors: int, *, name: str = "acmelike"):
    """Returns the `launchpad.Program` of `program_graph.experiment_graph`: replay, counter, learner, `num_actors`
    actors, an evaluator (unless `config.evaluation_every` is 0), and the steps limiter."""
    import launchpad as lp

    program = lp.Program(name)
    handles = {}

    def resolve(value):
        return handles[value.node] if isinstance(value, Ref) else value

    for node in experiment_graph(config, num_actors):
        with program.group(node.group):
            if node.kind == REPLAY:
                lp_node = lp.ReverbNode(node.constructor, checkpoint_ctor=node.kwargs.get("checkpointer"))
            else:
                args = [resolve(value) for value in node.args]
                kwargs = {key: resolve(value) for key, value in node.kwargs.items()}
                lp_node = lp.CourierNode(node.constructor, *args, **kwargs)
            handles[node.name] = program.add_node(lp_node)
    return program


def describe_program(program) -> str:
    """The node graph of a `launchpad.Program` as text: groups, nodes, and whose handles each node receives.

    Read off the program itself (each node's input handles, matched to the node owning that address), so it
    shows what Launchpad will wire, not what was meant to be wired.
    """
    owners = {}
    names = {}
    for group, members in program.groups.items():
        for index, node in enumerate(members):
            names[id(node)] = group if len(members) == 1 else f"{group}_{index}"
            for address in node.addresses:
                owners[id(address)] = group
    lines = []
    for group, members in program.groups.items():
        lines.append(f"{group} ({len(members)} node{'s' if len(members) > 1 else ''}):")
        for node in members:
            received = dict.fromkeys(owners.get(id(handle._address), "?") for handle in node.input_handles)
            receives = ", ".join(received) if received else "nothing"
            lines.append(f"  {names[id(node)]:<14s} {type(node).__name__:<12s} receives: {receives}")
    return "\n".join(lines)


def run_launchpad_program(
    config: ExperimentConfig, num_actors: int, launch_type: str, stop_timeout_s: float
) -> Dict[str, Any]:
    """Runs the program on Launchpad (`local_mt` threads or `local_mp` processes) after
    `supervisor.prepare_run_directory`, prints progress, and returns the summary. Raises `DistributedRunError`
    naming the node that failed. The program is stopped, and its processes gone, in every case."""
    import launchpad as lp
    from launchpad.launch.run_locally import launch_local_output_to_files

    run_dir = config.run_dir
    program = make_distributed_program(config, num_actors)
    print(describe_program(program), flush=True)
    start = time.time()
    # Installed before Launchpad's own handlers, which keep ours in their chain: a signal both stops every node
    # (Launchpad) and marks the run interrupted (ours).
    with StopRequests() as stop:
        if launch_type == "local_mp":
            logs = os.path.join(run_dir, "logs")
            os.makedirs(logs, exist_ok=True)
            # Launchpad reads this directory once at import; each node's output goes to <run_dir>/logs/<group>_<i>.
            launch_local_output_to_files._LOGGING_DIR = logs
            manager = lp.launch(program, launch_type=lp.LaunchType.LOCAL_MULTI_PROCESSING, terminal="output_to_files")
        else:
            manager = lp.launch(program, launch_type=lp.LaunchType.LOCAL_MULTI_THREADING)
        failure = _supervise(manager, run_dir, config.progress_period_s, config.max_num_actor_steps, stop_timeout_s)
    # Launchpad's stop countdown ends its line with a carriage return: start a fresh line for what follows.
    print(flush=True)
    wall = time.time() - start
    logs_hint = os.path.join(run_dir, "logs") if launch_type == "local_mp" else "this process's output"
    return supervisor.conclude(config, num_actors, launch_type, wall, stop, engine=launch_type, logs_hint=logs_hint,
                               engine_failure=failure)


def _supervise(manager, run_dir: str, period_s: float, max_steps: int, stop_timeout_s: float) -> Optional[BaseException]:
    """Waits for the program (printing progress); returns the first worker failure, if any."""
    result: Dict[str, BaseException] = {}

    def wait():
        try:
            manager.wait()
        except BaseException as error:  # noqa: BLE001 - handed to the main thread
            result["failure"] = error
            manager.wait(raise_error=False)  # the manager is stopping the other nodes; wait for them too

    waiter = threading.Thread(target=wait, name="acmelike-supervisor", daemon=True)
    waiter.start()
    last_print = time.time()
    # The main thread stays in Python sleeps so Launchpad's SIGINT/SIGTERM handlers (stop every node) run here.
    while waiter.is_alive():
        waiter.join(0.2)
        if time.time() - last_print >= period_s:
            last_print = time.time()
            supervisor.print_progress(run_dir, max_steps)
    return result.get("failure")


