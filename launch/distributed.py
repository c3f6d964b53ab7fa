"""make_distributed_program: the same builder as a Launchpad program; run_distributed: launch it and supervise.

    program = make_distributed_program(config, num_actors=2)
    print(describe_program(program))                 # what will launch
    summary = run_distributed(config, num_actors=2, launch_type="local_mp")

The nodes come from `launch.program_graph` (the engine-neutral description Ray executes too): replay (a ReverbNode
with the builder's tables, inserts may block), counter (a Counter), learner (dataset from replay, serves
get_variables), inference (only with `config.inference == "central"`: serves every actor's policy in dynamic
batches), actor (one per actor, each an EnvironmentLoop writing to replay), evaluator, steps_limiter (ends
the program at the actor-step budget); every other node is a CourierNode.
"""

import dataclasses
import glob
import json
import os
import threading
import time
from typing import Any, Dict, List, Optional

from launch import nodes
from launch.checkpoints import RunLifecycle, RunOptions
from launch.episode_stats import make_tracker, run_summary, write_config, write_summary
from launch.experiment import ExperimentConfig
from launch.interrupts import StopRequests
from launch.program_graph import REPLAY, Ref, experiment_graph

LAUNCH_TYPES = ("local_mt", "local_mp", "ray")


class DistributedRunError(RuntimeError):
    """A node of a distributed program failed; the message names it and carries its traceback."""


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


def run_distributed(
    config: ExperimentConfig,
    num_actors: int,
    launch_type: str = "local_mp",
    *,
    options: RunOptions = RunOptions(),
    stop_timeout_s: float = 60.0,
    ray_options=None,
) -> Dict[str, Any]:
    """Launches the program, prints progress, waits for the end, and returns the summary.

    `options` as for `run_single_process`: checkpoints, resume (each node restores its part: see
    `launch.node_checkpoints`) and TensorBoard. A run directory holding another run's checkpoints is refused
    (`CheckpointError`) before anything is written.

    Raises `DistributedRunError` naming the node (with its traceback) if any node fails; in every case the
    program is stopped and its processes are gone when this returns. Ctrl-C or SIGTERM stops every node.
    """
    import launchpad as lp
    from launchpad.launch.run_locally import launch_local_output_to_files

    if launch_type not in LAUNCH_TYPES:
        raise ValueError(f"Unknown launch type {launch_type!r}. Choose one of: {', '.join(LAUNCH_TYPES)}.")
    if not config.run_dir:
        raise ValueError("run_distributed needs config.run_dir: nodes report progress, logs and failures there.")
    if config.stop_at_average_return is not None and not config.evaluation_every:
        raise ValueError(
            "A distributed run stops at a target return when an evaluation round reaches it: "
            "set evaluation_every (--eval-every) > 0 together with stop_at_average_return (--stop-at-return)."
        )
    run_dir = os.path.abspath(config.run_dir)
    config = dataclasses.replace(config, run_dir=run_dir)
    # Checks the directory; writes run_options.json, which nodes read; when resuming, cuts the logs back.
    RunLifecycle(config, dataclasses.replace(options, launch=launch_type, actors=num_actors))
    os.makedirs(run_dir, exist_ok=True)
    write_config(config, run_dir)
    stale_files = [os.path.join(run_dir, name) for name in ("progress.json", nodes.ENDED_FILE)]
    for stale in glob.glob(os.path.join(run_dir, nodes.FAILURES_DIR, "*.txt")) + stale_files:
        if os.path.exists(stale):
            os.remove(stale)

    if launch_type == "ray":  # launch/ray_program.py: the same graph as Ray actors (`ray_options`: RayOptions)
        from launch.ray_program import run_ray_program

        return run_ray_program(config, num_actors, ray_options, stop_timeout_s)
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
    node_failures = _read_failures(run_dir)
    if node_failures or failure is not None:
        details = "\n".join(f"--- node {name} ---\n{text}" for name, text in node_failures.items())
        names = ", ".join(node_failures) or "unknown node"
        raise DistributedRunError(
            f"distributed program failed in node(s): {names} ({failure or 'see traceback'}).\n{details}"
            + (f"\nNode logs: {os.path.join(run_dir, 'logs')}" if launch_type == "local_mp" else "")
        )
    return _summary(config, run_dir, num_actors, launch_type, wall, stop)


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
            _print_progress(run_dir, max_steps)
    return result.get("failure")


def _read_progress(run_dir: str) -> Dict[str, Any]:
    """The counts the steps limiter last wrote (it replaces the file atomically)."""
    with open(os.path.join(run_dir, "progress.json")) as f:
        return json.load(f)


def _print_progress(run_dir: str, max_steps: int) -> None:
    try:
        counts = _read_progress(run_dir)
    except (OSError, ValueError):  # not written yet
        return
    evaluation = _last_evaluation(run_dir)
    print(
        f"[distributed] actor steps {int(counts.get('actor_steps', 0)):>8d}/{max_steps} | "
        f"episodes {int(counts.get('actor_episodes', 0)):>5d} | learner steps {int(counts.get('learner_steps', 0)):>6d}"
        + (f" | evaluator return {evaluation:6.1f}" if evaluation is not None else ""),
        flush=True,
    )


def _read_failures(run_dir: str) -> Dict[str, str]:
    failures = {}
    for path in sorted(glob.glob(os.path.join(run_dir, nodes.FAILURES_DIR, "*.txt"))):
        with open(path) as f:
            failures[os.path.splitext(os.path.basename(path))[0]] = f.read()
    return failures


def _read_csv(path: str) -> List[Dict[str, str]]:
    import csv

    if not os.path.exists(path):
        return []
    with open(path) as f:
        return list(csv.DictReader(f))


def _last_evaluation(run_dir: str) -> Optional[float]:
    rows = _read_csv(os.path.join(run_dir, "evaluator.csv"))
    return float(rows[-1]["average_return"]) if rows else None


def _summary(
    config: ExperimentConfig, run_dir: str, num_actors: int, launch_type: str, wall: float, stop: StopRequests,
    **extra: Any,
) -> Dict[str, Any]:
    try:
        counts = _read_progress(run_dir)
    except (OSError, ValueError):  # stopped before the steps limiter wrote anything
        counts = {}
    episodes = []
    for index in range(num_actors):
        episodes += _read_csv(os.path.join(run_dir, f"actor_{index}.csv"))
    episodes.sort(key=lambda row: float(row["actor_steps"]))
    tracker = make_tracker(config)
    for row in episodes:
        tracker.add(float(row["episode_return"]), int(float(row["actor_steps"])))
    evaluation = _last_evaluation(run_dir)
    # A node ending the program (budget, target return) also SIGTERMs the launcher: only a signal that came
    # without such an ending is an interruption.
    ended_by_program = os.path.exists(os.path.join(run_dir, nodes.ENDED_FILE))
    interrupted = stop.signal_name == "SIGINT" or (stop.requested and not ended_by_program)
    summary = run_summary(
        config, tracker, counts, wall, launch=launch_type, actors=num_actors, inference=config.inference,
        average_evaluator_return=evaluation,
        interrupted=interrupted, **({"signal": stop.signal_name} if interrupted else {}), **extra,
    )
    write_summary(run_dir, summary)
    from acmelike.loggers.plotting import plot_run_learning_curve

    plot_run_learning_curve(
        run_dir,
        actor_labels=[f"actor_{index}" for index in range(num_actors)],
        window=config.return_window,
        title=f"{config.agent_name} on {config.environment_name}, {num_actors} actors ({launch_type})",
    )
    return summary
