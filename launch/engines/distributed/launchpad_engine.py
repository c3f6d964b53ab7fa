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

import concurrent.futures
import ctypes
import dataclasses
import os
import signal
import subprocess
import threading
import time
from typing import Any, Callable, Dict, Optional, Tuple

from acmelike import files, placement
from launch.engines.bind_address import DEFAULT, EVERY_INTERFACE, listen_on, resolve
from launch.engines.distributed import nodes, supervisor
from launch.engines.distributed.graph import REPLAY, RESTARTABLE_GROUPS, Ref, experiment_graph
from launch.engines.distributed.import_path import node_environment
from launch.experiments.config import ExperimentConfig
from launch.experiments.interrupts import StopRequests

PROCESSES_FILE = "node_processes.json"  # local_mp: {node name: pid}
NODE_RESTARTS = 3  # how often local_mp restarts one node of a RESTARTABLE_GROUPS group whose process died


def make_distributed_program(config: ExperimentConfig, num_actors: int, *, name: str = "acmelike"):
    """Returns the `launchpad.Program` of `program_graph.experiment_graph`: replay, counter, learner, `num_actors`
    actors, an evaluator (unless `config.evaluation_every` is 0), and the steps limiter."""
    import launchpad as lp

    program = lp.Program(name)
    handles = {}

    def resolve(value):
        return handles[value.node] if isinstance(value, Ref) else value

    # Its replay node is a Reverb server (Launchpad's ReverbNode), whatever the config's replay says.
    for node in experiment_graph(dataclasses.replace(config, replay="reverb"), num_actors):
        with program.group(node.group):
            if node.kind == REPLAY:
                lp_node = lp.ReverbNode(_NodeProcess(node.constructor), checkpoint_ctor=node.kwargs.get("checkpointer"))
            else:
                args = [resolve(value) for value in node.args]
                kwargs = {key: resolve(value) for key, value in node.kwargs.items()}
                lp_node = lp.CourierNode(_NodeProcess(node.constructor), *args, **kwargs)
            handles[node.name] = program.add_node(lp_node)
    return program


class _NodeProcess:
    """A node's constructor that, in a node process of its own (local_mp), first moves the process out of the
    launcher's process group, and ties its life to the launcher's.

    A terminal's Ctrl-C (a SIGINT to the foreground process group), or a scheduler's SIGTERM to a job's group,
    then reaches the launcher alone, which checkpoints the run before Launchpad stops the nodes (`_supervise`);
    in the launcher's group every node would get the signal and stop at once, the replay and counter with them.
    A launcher that dies (kill -9) still takes its nodes with it (PR_SET_PDEATHSIG), as a kill of the group did.
    Under local_mt the nodes are the launcher's own threads, and nothing changes.
    """

    def __init__(self, constructor):
        self._constructor = constructor
        self._launcher_pid = os.getpid()

    def __call__(self, *args, **kwargs):
        if os.getpid() != self._launcher_pid:
            _leave_launcher_group(self._launcher_pid)
        return self._constructor(*args, **kwargs)


def _leave_launcher_group(launcher_pid: int) -> None:
    pr_set_pdeathsig = 1  # <linux/prctl.h>
    if ctypes.CDLL(None, use_errno=True).prctl(pr_set_pdeathsig, signal.SIGKILL) != 0:
        print(f"[node {os.getpid()}] prctl(PR_SET_PDEATHSIG) failed (errno {ctypes.get_errno()}): this node "
              "outlives a launcher killed with SIGKILL", flush=True)
    if os.getppid() != launcher_pid:  # the launcher died before the line above
        os.kill(os.getpid(), signal.SIGKILL)
    os.setpgid(0, 0)


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


def check_launchpad_bind_address(address: Optional[str]) -> None:
    """Launchpad gives its nodes `localhost:PORT` addresses to dial: their servers listen on 127.0.0.1 (None) or
    every interface, never on another address alone (ValueError)."""
    if resolve(address) not in (DEFAULT, EVERY_INTERFACE):
        raise ValueError(
            f"--bind-address {address}: Launchpad's nodes dial each other at localhost, so --launch local_mt and "
            f"local_mp listen on {DEFAULT} (the default) or {EVERY_INTERFACE} (every interface); another address "
            f"is for --launch ray."
        )


def run_launchpad_program(
    config: ExperimentConfig, num_actors: int, launch: str, stop_timeout_s: float,
    bind_address: Optional[str] = None,
) -> Dict[str, Any]:
    """Runs the program on Launchpad (`local_mt` threads or `local_mp` processes) after
    `supervisor.prepare_run_directory`, prints progress, and returns the summary. Every node's server listens on
    `bind_address` (checked by `launcher.run_distributed`: `check_launchpad_bind_address`). Raises
    `DistributedRunError` naming the node that failed. The program is stopped, and its processes gone, in every
    case."""
    import launchpad as lp
    from launchpad.launch.run_locally import launch_local_output_to_files
    from launchpad.nodes.python.local_multi_processing import PythonProcess

    # local_mt's nodes serve from this process; local_mp's from the processes it starts, which inherit the setting.
    listen_on(bind_address, here=launch == "local_mt")
    run_dir = config.run_dir
    program = make_distributed_program(config, num_actors)
    print(describe_program(program), flush=True)
    start = time.time()
    if launch == "local_mp":
        logs = os.path.join(run_dir, "logs")
        os.makedirs(logs, exist_ok=True)
        # Launchpad reads this directory once at import; each node's output goes to <run_dir>/logs/<group>_<i>.
        launch_local_output_to_files._LOGGING_DIR = logs
        # Each node process imports what this one can: a builder from the user's own module unpickles there too.
        environment = node_environment()
        # Each group's processes see the devices it runs on (`acmelike.placement`): actors only the CPU.
        resources = {group: PythonProcess(env={**environment, **placement.process_environment(group)})
                     for group in program.groups}
        manager = lp.launch(program, launch_type=lp.LaunchType.LOCAL_MULTI_PROCESSING, terminal="output_to_files",
                            local_resources=resources)
    else:
        manager = lp.launch(program, launch_type=lp.LaunchType.LOCAL_MULTI_THREADING)
    # Installed over Launchpad's handlers (which stop every node at once): a user's signal is held back from them
    # until the learner has checkpointed the run (`_supervise`); the program's own stop (`nodes.end_program`, a
    # SIGTERM to this process once ended.json is written) goes straight through.
    ended = os.path.join(run_dir, nodes.ENDED_FILE)
    with StopRequests(hold_back=True, passes=lambda number: number == signal.SIGTERM and os.path.exists(ended)) as stop:
        failure, died, restarts = _supervise(program, manager, stop, run_dir, config, stop_timeout_s)
    # Launchpad's stop countdown ends its line with a carriage return: start a fresh line for what follows.
    print(flush=True)
    wall = time.time() - start
    logs_hint = os.path.join(run_dir, "logs") if launch == "local_mp" else "this process's output"
    return supervisor.conclude(config, num_actors, launch, wall, stop, engine=launch, logs_hint=logs_hint,
                               engine_failures=died, engine_failure=failure, restarts=restarts)


def _supervise(program, manager, stop: StopRequests, run_dir: str, config: ExperimentConfig, stop_timeout_s: float
               ) -> Tuple[Optional[BaseException], Dict[str, str], Dict[str, int]]:
    """Waits for the program (printing progress); checkpoints the run when a signal is held back (`StopRequests`),
    then lets Launchpad stop the nodes. Returns the first worker failure, if any, {node: what Launchpad saw} for
    each node process that died (exited non-zero) without reporting why itself, and {node: restarts} (local_mp
    restarts a dead actor: `_RestartingProcess`)."""
    processes: Dict[str, Any] = {}
    logs: Dict[str, str] = {}  # node -> its output file

    def write_processes():  # which process is which node, for people (and tests) who signal one
        files.write_json(os.path.join(run_dir, PROCESSES_FILE),
                         {name: process.pid for name, process in processes.items()}, indent=1)

    processes.update(_node_processes(program, manager, lambda: stop.requested or manager.stop_event().is_set(),
                                     write_processes, logs))
    if processes:
        write_processes()
    result: Dict[str, Any] = {}

    def wait():
        try:
            manager.wait()
        except BaseException as error:  # noqa: BLE001 - handed to the main thread
            result["failure"] = error
            # Before the others end (Launchpad has just asked them to): the processes that are gone are those that died.
            result["died"] = {name: f"Launchpad: node {name!r} (process {process.pid}) {_exit_status(code, process)}"
                                    f"\n{_log_tail(logs[name])}"
                              for name, process in processes.items() if (code := process.poll())}
            manager.wait(raise_error=False)  # the manager is stopping the other nodes; wait for them too

    waiter = threading.Thread(target=wait, name="acmelike-supervisor", daemon=True)
    waiter.start()
    last_print = time.time()
    # The main thread stays in Python sleeps so the signal handlers (ours, then Launchpad's) run here.
    while waiter.is_alive():
        waiter.join(0.2)
        if stop.held:
            learner = program.groups["learner"][0].create_handle().dereference()
            supervisor.checkpoint_before_stopping(lambda: _checkpoint(learner, stop, stop_timeout_s), run_dir,
                                                  stop.signal_name)
            stop.release()
        if time.time() - last_print >= config.progress_period_s:
            last_print = time.time()
            supervisor.print_progress(run_dir, config)
    restarts = {name: process.restarts for name, process in processes.items()
                if isinstance(process, _RestartingProcess) and process.restarts}
    return result.get("failure"), result.get("died", {}), restarts


def _checkpoint(learner, stop: StopRequests, timeout_s: float) -> Optional[str]:
    """The learner node's `checkpoint()`; None if a second signal stops the program first."""
    future = learner.futures.checkpoint()
    deadline = time.time() + timeout_s
    while stop.held:
        try:
            return future.result(timeout=0.2)
        except concurrent.futures.TimeoutError:
            if time.time() > deadline:
                raise TimeoutError(f"the learner node did not checkpoint within {timeout_s:.0f} s (the stop "
                                   "timeout): the program stops without it") from None
    print("[distributed] a second signal: stopping without waiting for the checkpoint", flush=True)
    return None


def _node_processes(program, manager, stopping: Callable[[], bool], on_restart: Callable[[], None],
                    logs: Dict[str, str]) -> Dict[str, Any]:
    """{node name: its process} of a local_mp program (empty under local_mt), each node of a `RESTARTABLE_GROUPS`
    group now behind a `_RestartingProcess`; fills `logs` with {node name: its output file}. Launchpad 0.5.2 keeps
    each node's `subprocess.Popen` in its worker manager under "<group>/<index>" (a private attribute: the only
    place that says which node a process is)."""
    from launchpad.launch.run_locally import launch_local_output_to_files

    processes = {}
    with manager._mutex:
        for title, workers in getattr(manager, "_active_workers", {}).items():
            group, _, index = title.rpartition("/")
            for position, worker in enumerate(workers):
                if not isinstance(worker, subprocess.Popen) or group not in program.groups:
                    continue
                name = group if len(program.groups[group]) == 1 else f"{group}_{index}"
                logs[name] = log = os.path.join(launch_local_output_to_files._LOGGING_DIR, title)
                if group in RESTARTABLE_GROUPS:
                    worker = workers[position] = _RestartingProcess(name, worker, log, stopping, on_restart)
                processes[name] = worker
    return processes


class _RestartingProcess(subprocess.Popen):
    """Stands in for a restartable node's `subprocess.Popen` in Launchpad's worker manager, so that local_mp
    restarts a node whose process dies, as Ray does.

    When the process dies of a signal (kill -9, the OOM killer) while the program is not stopping (`stopping()`),
    the same command starts again, its output appended to the node's log, up to `NODE_RESTARTS` times: the node
    rebuilds itself from the config and its own checkpoint, and Launchpad, polling with `wait(0)`, sees a process
    still running. A node that raises exits with code 1 (its failure file written): it is not restarted, and it
    stops the program as before. Launchpad 0.5.2 uses only `wait`, `send_signal` and `pid` of its workers;
    `Popen.__init__` is not called, since this object starts a process only to restart one.
    """

    _child_created = False  # what Popen.__del__ reads

    def __init__(self, name: str, process: subprocess.Popen, log_path: str, stopping: Callable[[], bool],
                 on_restart: Callable[[], None]):
        self.name = name
        self.restarts = 0
        self._process = process
        self._log_path = log_path
        self._stopping = stopping
        self._on_restart = on_restart

    @property
    def pid(self) -> int:
        return self._process.pid

    @property
    def args(self):
        return self._process.args

    @property
    def returncode(self) -> Optional[int]:
        return self._process.returncode

    def poll(self) -> Optional[int]:
        return self._process.poll()

    def send_signal(self, sig) -> None:
        self._process.send_signal(sig)

    def wait(self, timeout=None) -> int:
        code = self._process.wait(timeout)  # subprocess.TimeoutExpired while it runs
        if code >= 0 or self.restarts >= NODE_RESTARTS or self._stopping():
            return code
        self.restarts += 1
        print(f"[distributed] node {self.name!r} (process {self.pid}) was killed by {signal.Signals(-code).name}: "
              f"restarting it ({self.restarts} of {NODE_RESTARTS})", flush=True)
        with open(self._log_path, "a") as log:
            self._process = subprocess.Popen(self.args, env={**os.environ, **node_environment()}, stdout=log,
                                             stderr=log)
        self._on_restart()
        raise subprocess.TimeoutExpired(self.args, timeout)


LOG_TAIL_LINES = 12  # of a node's output, in the failure of a node that died without writing its own


def _log_tail(path: str) -> str:
    """The last lines of a node's output: why a node that failed before its own code ran (a module its config
    names that does not import there, say) failed, in the run's failure summary."""
    try:
        with open(path, errors="replace") as f:
            lines = f.read().splitlines()
    except OSError as error:
        return f"(its output {path} cannot be read: {error})\n"
    return f"the end of its output ({path}):\n" + "\n".join(lines[-LOG_TAIL_LINES:]) + "\n"


def _exit_status(code: int, process) -> str:
    if code >= 0:
        return f"exited with code {code}"
    restarts = getattr(process, "restarts", None)
    how = ("and local_mp restarts no node of its group" if restarts is None
           else f"after {restarts} restart{'s' if restarts != 1 else ''} (local_mp restarts a node {NODE_RESTARTS} times)")
    return f"was killed by {signal.Signals(-code).name}, {how}"
