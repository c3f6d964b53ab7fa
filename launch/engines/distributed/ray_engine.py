"""Ray as a second engine of the program graph (`launch.engines.distributed.graph`): every node is a Ray actor.

    summary = run_distributed(config, num_actors=2, launch="ray")            # a Ray instance on this machine
    options = RayOptions(address="10.0.0.1:6379", resources=parse_resources("actor=worker,learner=head"))
    summary = run_distributed(config, num_actors=2, launch="ray", ray_options=options)   # an existing cluster

One generic host (`NodeHost`) builds any node of the graph inside its own Ray actor process: it installs a Ray
`runtime.Runtime` there (so the node's `runtime.stop_event()` is set when the driver stops the program, and its
`runtime.stop_program()` tells the driver), turns each `Ref` into a client (of the replay node: a `reverb.Client` of
the Reverb server inside its host when `config.replay` is "reverb", else an `acmelike.replay.remote.RemoteReplay`
over a `RayClient` of the host serving the local replay's tables, `replay_node`; of other nodes a `RayClient` with
`client.method(...)` and `client.futures.method(...)`), serves the node's methods from a thread pool
(`max_concurrency`), and runs the node's `run()`. Node bodies are `launch.engines.distributed.nodes`' own; nothing
here repeats them.

Placement: `RayOptions.resources` maps a graph group (replay, counter, learner, actor, evaluator, steps_limiter) to
the custom Ray resources each node of that group needs, e.g. actors on machines started with
`ray start --resources '{"worker": 1}'`. A node asks `LABEL_AMOUNT` of a resource unless `NAME:AMOUNT` says
otherwise, so a resource is a label (replay and learner both fit on a node started with `{"head": 1}`), and a
capacity only where an amount is given. Hosts ask for no CPU, so a small machine schedules every node. On a cluster the run directory must be on
a file system every machine sees (nodes write their CSV logs and failures there).

Faults: Ray restarts a host of a group in `RESTARTABLE_GROUPS` whose process dies (`max_restarts`), rebuilds its
node and runs it again; the driver counts the restarts (`summary["restarts"]`). A node of any other group whose
process dies stops the program naming it; a node that raises stops it with its traceback (`nodes.report_failures`).
A learner that resumes from its latest checkpoint can join `RESTARTABLE_GROUPS` once resume is distributed.
"""

import dataclasses
import ipaddress
import logging
import os
import secrets
import shutil
import socket
import sys
import tempfile
import threading
import time
import uuid
import warnings
from importlib.metadata import version as installed_version
from typing import Any, Callable, Dict, List, Mapping, Optional, Tuple

from acmelike import files, placement
from acmelike.replay.remote import RemoteReplay
from launch.engines.bind_address import listen_on
from launch.engines.distributed import runtime, supervisor
from launch.experiments.config import ExperimentConfig
from launch.experiments.interrupts import StopRequests
from launch.engines.distributed.graph import LOCAL_REPLAY, REPLAY, RESTARTABLE_GROUPS, Node, Ref, experiment_graph
from launch.engines.distributed.import_path import node_environment

COORDINATOR = "coordinator"  # the driver's mailbox; hosts are named after their nodes, in the run's own namespace
PLACEMENT_FILE = "ray_nodes.json"  # where each node runs: Ray node id, hostname, pid, that node's custom resources
TEMP_DIR = "ray"  # Ray's session files and logs, under the run directory
# Ray's longest unix socket path is <temp dir>/session_<date>_<time>_<usec>_<pid>/sockets/plasma_store and Linux
# caps it at 107 bytes: a longer temp dir makes ray.init fail, so a run directory that deep gets a short one.
_SOCKET_PATH_ROOM = len("/session_2026-01-01_00-00-00_000000_4194304/sockets/plasma_store")
_SOCKET_PATH_MAX = 107
_LOCAL_OBJECT_STORE_BYTES = 256 * 1024 * 1024  # only parameters and counts travel through it
_POLL_S = 0.2
LABEL_AMOUNT = 0.01  # what a node asks of a resource named without an amount: 100 such nodes fit in one unit
TOKEN_AUTHENTICATION = (2, 52)  # the first Ray to check a token on every call (RAY_AUTH_MODE=token)
_UNPLACED_WARNING_S = 30.0


@dataclasses.dataclass(frozen=True)
class RayOptions:
    """How a program runs on Ray.

    Attributes:
      address: an existing cluster's address (`ray start --head` prints it); None starts Ray on this machine
        (on the run's bind address, 127.0.0.1 by default; no dashboard; its temp dir under the run directory) for
        this run alone.
      resources: group -> {custom resource: amount} each node of the group needs (see `parse_resources`).
      max_restarts: how often Ray restarts one node of a `RESTARTABLE_GROUPS` group after its process died.
    """

    address: Optional[str] = None
    resources: Mapping[str, Mapping[str, float]] = dataclasses.field(default_factory=dict)
    max_restarts: int = 3

    def __post_init__(self):
        if self.max_restarts < 0:
            raise ValueError(f"RayOptions.max_restarts must be >= 0, got {self.max_restarts}.")


def parse_resources(text: str) -> Dict[str, Dict[str, float]]:
    """`"actor=worker,learner=head,learner=gpu:0.5"` -> `{"actor": {"worker": 0.01}, "learner": {"head": 0.01,
    "gpu": 0.5}}`: GROUP=RESOURCE[:AMOUNT] items, comma-separated, AMOUNT `LABEL_AMOUNT` unless given; a group may
    be named more than once."""
    resources: Dict[str, Dict[str, float]] = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        group, _, resource = item.partition("=")
        name, _, amount = resource.partition(":")
        try:
            value = float(amount) if amount else LABEL_AMOUNT
        except ValueError:
            value = -1.0
        if not group or not name or value <= 0:
            raise ValueError(
                f"bad Ray placement {item!r}: write GROUP=RESOURCE[:AMOUNT] with AMOUNT > 0, e.g. actor=worker or "
                f"learner=head:1 (groups: replay, counter, learner, actor, evaluator, steps_limiter)."
            )
        resources.setdefault(group.strip(), {})[name.strip()] = value
    return resources


class RayClient:
    """Another node's methods through its host: `client.method(...)` waits, `client.futures.method(...)` returns a
    `concurrent.futures.Future` (as Launchpad's courier clients do)."""

    def __init__(self, host):
        self._host = host
        self.futures = _Futures(host)

    def __getattr__(self, method: str):
        if method.startswith("_"):
            raise AttributeError(method)
        futures = self.futures

        def call(*args, **kwargs):
            return getattr(futures, method)(*args, **kwargs).result()

        return call


class _Futures:
    def __init__(self, host):
        self._host = host

    def __getattr__(self, method: str):
        if method.startswith("_"):
            raise AttributeError(method)
        return lambda *args, **kwargs: self._host.call.remote(method, *args, **kwargs).future()


class _ReplayServer:
    """The replay node: a Reverb server over the node's tables, in its host's process."""

    def __init__(self, tables, checkpointer=None):
        import reverb

        # `checkpointer` (the graph's replay kwargs): builds the Reverb checkpointer that restores the run's replay.
        self._server = reverb.Server(tables, port=None, checkpointer=checkpointer() if checkpointer else None)
        self._port = self._server.port

    def address(self) -> str:
        import ray

        return f"{ray.util.get_node_ip_address()}:{self._port}"


class Coordinator:
    """The driver's mailbox (a Ray actor): hosts say where they started (every restart too) and who ends the program."""

    def __init__(self):
        self._starts: Dict[str, List[Dict[str, Any]]] = {}
        self._ended_by: Optional[str] = None

    def started(self, name: str, where: Dict[str, Any]) -> None:
        self._starts.setdefault(name, []).append(where)

    def stop_program(self, name: str) -> None:
        self._ended_by = self._ended_by or name

    def state(self) -> Tuple[Dict[str, List[Dict[str, Any]]], Optional[str]]:
        return self._starts, self._ended_by


class NodeHost:
    """Builds one graph node in this Ray actor's process, serves its methods and runs its `run()`.

    `endpoints` maps each node this one references to (REPLAY, its Reverb address) or (its kind, its host's actor
    name). Hosts find each other by name in the run's namespace: a handle passed to a constructor would make Ray
    warn that a restart may fail (ray-project/ray#53727).
    """

    def __init__(self, node: Node, endpoints: Dict[str, Tuple[str, str]]):
        import ray

        self._name = node.name
        self._stop = threading.Event()
        self._coordinator = coordinator = ray.get_actor(COORDINATOR)
        runtime.install(runtime.Runtime(lambda: self._stop, self._stop_program, "ray"))
        # Before the node's first JAX call: a node that runs on the CPU never starts the accelerator's backend.
        placement.restrict_process(node.group)
        context = ray.get_runtime_context()
        where = {"node_id": context.get_node_id(), "hostname": socket.gethostname(), "pid": os.getpid(),
                 "device": placement.device_name(placement.plan().for_group(node.group))}
        ray.get(coordinator.started.remote(node.name, where))
        clients = {name: _client(*endpoint) for name, endpoint in endpoints.items()}

        def resolve(value):
            return clients[value.node] if isinstance(value, Ref) else value

        if node.kind == REPLAY:
            self._node = _ReplayServer(node.constructor(), node.kwargs.get("checkpointer"))
        else:
            args = [resolve(value) for value in node.args]
            kwargs = {key: resolve(value) for key, value in node.kwargs.items()}
            self._node = node.constructor(*args, **kwargs)

    def _stop_program(self) -> None:
        import ray

        ray.get(self._coordinator.stop_program.remote(self._name))

    def call(self, method: str, *args, **kwargs):
        return getattr(self._node, method)(*args, **kwargs)

    def run(self) -> None:
        """The node's `run()`; for a node without one (replay, counter), until the program stops. Either way the
        driver's reference to this call fails when the host's process dies."""
        if callable(getattr(self._node, "run", None)):
            self._node.run()
        else:
            self._stop.wait()

    def stop(self) -> None:
        self._stop.set()


def _client(kind: str, target: str):
    import ray

    if kind == REPLAY:
        import reverb

        return reverb.Client(target)
    if kind == LOCAL_REPLAY:
        return RemoteReplay(RayClient(ray.get_actor(target)))
    return RayClient(ray.get_actor(target))


def describe_graph(graph: List[Node], options: RayOptions) -> str:
    """The program as Ray will place it: each node, the nodes it receives, the resources it asks for."""
    lines = []
    for node in graph:
        receives = ", ".join(node.references()) or "nothing"
        needs = options.resources.get(node.group, {})
        place = ", ".join(f"{name}:{amount:g}" for name, amount in needs.items()) or "anywhere"
        restart = f", restarts <= {options.max_restarts}" if node.group in RESTARTABLE_GROUPS else ""
        lines.append(f"  {node.name:<14s} receives: {receives:<24s} placed: {place}{restart}")
    return "ray program:\n" + "\n".join(lines)


def ray_temp_dir(run_dir: str) -> Tuple[str, bool]:
    """Ray's temp dir for a run on this machine: `<run_dir>/ray`, or a short directory under the system temp dir
    (True) when that path would make Ray's unix socket paths longer than Linux allows."""
    preferred = os.path.join(run_dir, TEMP_DIR)
    if len(preferred.encode()) + _SOCKET_PATH_ROOM <= _SOCKET_PATH_MAX:
        return preferred, False
    return tempfile.mkdtemp(prefix="acmelike-ray-", dir="/tmp" if os.path.isdir("/tmp") else None), True


class RayProgram:
    """The graph's nodes as Ray actors: `start()`, then `supervise(...)`, then `stop(...)` (always; see `kill`)."""

    def __init__(self, graph: List[Node], options: RayOptions):
        self._graph = graph
        self._options = options
        self._hosts: Dict[str, Any] = {}
        self._runs: Dict[Any, str] = {}  # run() object ref -> node name
        self._coordinator = None
        self.died: Dict[str, str] = {}  # node -> why Ray says its host died or its run() failed

    def start(self) -> None:
        import ray

        self._coordinator = ray.remote(Coordinator).options(name=COORDINATOR, num_cpus=0, max_concurrency=4).remote()
        endpoints: Dict[str, Tuple[str, str]] = {}
        host_class = ray.remote(NodeHost)
        concurrency = len(self._graph) + 4  # every other node may call at once, besides run() and stop()
        for node in self._graph:
            restartable = node.group in RESTARTABLE_GROUPS
            host = host_class.options(
                name=node.name,
                num_cpus=0,
                resources=dict(self._options.resources.get(node.group, {})),
                max_concurrency=concurrency,
                max_restarts=self._options.max_restarts if restartable else 0,
                max_task_retries=-1 if restartable else 0,  # a restarted host runs its node again
            ).remote(node, {name: endpoints[name] for name in node.references()})
            self._hosts[node.name] = host
            if node.kind == REPLAY:
                endpoints[node.name] = (REPLAY, ray.get(host.call.remote("address")))
            else:
                endpoints[node.name] = (node.kind, node.name)
        for node in self._graph:
            self._runs[self._hosts[node.name].run.remote()] = node.name

    def state(self) -> Tuple[Dict[str, List[Dict[str, Any]]], Optional[str]]:
        """(node -> every start of its host, the node that ended the program or None)."""
        import ray

        return ray.get(self._coordinator.state.remote())

    def supervise(self, stop: StopRequests, every_period: Callable[[], None], period_s: float) -> Optional[str]:
        """Waits until a node ends the program, a node fails or dies, or a signal comes; calls `every_period()`
        every `period_s`. Returns the name of a node that failed or died, else None."""
        import ray

        last = time.time()
        while True:
            ready, _ = ray.wait(list(self._runs), num_returns=1, timeout=_POLL_S)
            for ref in ready:
                name = self._runs.pop(ref)
                try:
                    ray.get(ref)
                except ray.exceptions.RayTaskError as error:
                    self.died[name] = f"raised {type(error.cause).__name__}: {error.cause}"
                except ray.exceptions.RayActorError as error:
                    self.died[name] = f"its process died ({_first_and_last_line(error)})"
            if self.died:
                return next(iter(self.died))
            _, ended_by = self.state()
            if ended_by or stop.requested or not self._runs:
                return None
            if time.time() - last >= period_s:
                last = time.time()
                every_period()

    def checkpoint(self, timeout_s: float) -> Optional[str]:
        """The learner node's `checkpoint()` (the run's checkpoint, taken while the other nodes are up)."""
        import ray

        return ray.get(self._hosts["learner"].call.remote("checkpoint"), timeout=timeout_s)

    def stop(self, timeout_s: float) -> None:
        """Sets every node's stop event, waits up to `timeout_s` for their `run()` to return, then ends every host."""
        import ray

        for host in self._hosts.values():
            host.stop.remote()
        started = self.state()[0]
        running = [ref for ref, name in self._runs.items() if name in started]  # a host never placed never ran
        if running:
            ray.wait(running, num_returns=len(running), timeout=timeout_s)
        self.kill()

    def unplaced(self) -> Dict[str, Dict[str, float]]:
        """The nodes whose host has not started yet, with the resources they wait for."""
        started = self.state()[0]
        return {node.name: dict(self._options.resources.get(node.group, {})) for node in self._graph
                if node.name not in started}

    def kill(self) -> None:
        import ray

        for host in list(self._hosts.values()) + ([self._coordinator] if self._coordinator else []):
            ray.kill(host, no_restart=True)
        self._hosts.clear()
        self._coordinator = None


def _first_and_last_line(error: BaseException) -> str:
    """What Ray says of a dead actor, shortened: its first line (how it died, in which task) and its last (the
    error itself, e.g. the ModuleNotFoundError of a node whose config names a module its process cannot import)."""
    lines = [line.strip() for line in str(error).strip().splitlines() if line.strip()]
    if not lines:
        return type(error).__name__
    return lines[0] if len(lines) == 1 else f"{lines[0]} ... {lines[-1]}"


def placements(starts: Mapping[str, List[Mapping[str, Any]]]) -> Dict[str, Dict[str, Any]]:
    """Where each node runs now (its latest start), with that Ray node's custom resources and the node's restarts."""
    import ray

    custom = {}
    for ray_node in ray.nodes():
        resources = ray_node.get("Resources", {})
        custom[ray_node["NodeID"]] = {
            key: value for key, value in resources.items()
            if key not in ("CPU", "memory", "object_store_memory") and not key.startswith("node:")
        }
    return {
        name: {**runs[-1], "resources": custom.get(runs[-1]["node_id"], {}), "restarts": len(runs) - 1}
        for name, runs in starts.items()
    }


def _start_ray(options: RayOptions, run_dir: str, bind_address: Optional[str]) -> Tuple[Optional[str], bool]:
    """ray.init: joins `options.address`, or starts Ray here for this run; returns (temp dir, whether it is a
    fallback outside the run directory).

    Every server this process and the Ray it starts bind listens on `bind_address` (`launch.engines.bind_address`):
    by default 127.0.0.1, or, joining a cluster, the address this machine reaches it from. With a Ray that has
    token authentication, it is on (`_use_token_authentication`, before Ray is imported: Ray reads its
    authentication settings once, when it is first imported)."""
    # A namespace of its own: the hosts' names (the graph's node names) never meet another run's on a shared cluster.
    # Workers import what this process can (`import_path`): a builder from the user's own module unpickles there
    # too. On a cluster, these directories must exist on every machine (or the module be installed there).
    common = dict(
        include_dashboard=False, log_to_driver=False, logging_level=logging.WARNING,
        namespace=f"acmelike-{uuid.uuid4().hex[:12]}",
    )
    if options.address:
        listen_on(bind_address or _address_towards(options.address), here=True)
        _use_token_authentication(local=False)
        import ray

        ray.init(address=options.address, runtime_env={"env_vars": node_environment()}, **common)
        return None, False
    # A local Ray's daemons and workers inherit this process's environment (as they inherit the bind address): no
    # runtime_env, whose agent a loaded machine starts too slowly for the raylet, which then fails every worker
    # ("Runtime Env Agent timed out in 30000ms").
    os.environ.update(node_environment())
    host = listen_on(bind_address, here=True)
    _use_token_authentication(local=True)
    temp_dir, fallback = ray_temp_dir(run_dir)
    if fallback:
        print(
            f"[ray] {run_dir}/{TEMP_DIR} is too deep for Ray's unix sockets ({_SOCKET_PATH_MAX} bytes at most): Ray "
            f"uses {temp_dir}, moved to {run_dir}/{TEMP_DIR} when the run ends.", flush=True,
        )
    # This run's own resources, so that a placement asked for on the command line also schedules on one machine.
    wanted = {name for needs in options.resources.values() for name in needs}
    try:
        with warnings.catch_warnings():
            # Ray starts its daemons with fork+exec from this (JAX-threaded) process; nothing runs between the two.
            warnings.filterwarnings("ignore", message=r"os\.fork\(\) was called", category=RuntimeWarning)
            _init_local(temp_dir, wanted, common, host)
    except Exception as error:
        # Ray's own message ("The current node timed out during startup...") names no file; its daemons' logs say
        # why (a raylet that crashed, agents that started too slowly on a loaded machine), so they are kept with
        # the run and named.
        ray = sys.modules.get("ray")  # imported by `_init_local` unless it failed before that
        if ray is not None:
            ray.shutdown()
        if fallback:
            _keep_temp_dir(temp_dir, run_dir)
        logs = os.path.join(run_dir, TEMP_DIR, "session_latest", "logs")
        raise RuntimeError(f"Ray did not start on this machine: {error} Its daemons' logs are in {logs} "
                           f"(raylet.out, gcs_server.out). On a loaded machine, start the run again when fewer "
                           f"processes compete for its cores.") from error
    return temp_dir, fallback


def _address_towards(cluster: str) -> str:
    """The address of this machine's interface that reaches `cluster` (HOST:PORT): the cluster's own address for
    this machine, where its Ray nodes reach this driver."""
    host, _, port = cluster.rpartition(":")
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
            probe.connect((socket.gethostbyname(host), int(port)))  # a UDP socket: this only picks a route
            return probe.getsockname()[0]
    except (OSError, ValueError) as error:
        raise ValueError(f"--ray-address {cluster}: cannot tell which address of this machine reaches it ({error}): "
                         f"give it as HOST:PORT, or name this machine's address with --bind-address.") from None


def _use_token_authentication(local: bool) -> None:
    """Turns on Ray's token authentication (RAY_AUTH_MODE=token, Ray >= 2.52) for the Ray this process starts or
    joins, unless RAY_AUTH_MODE already says otherwise. A local Ray gets a fresh token of its own (RAY_AUTH_TOKEN,
    inherited by its daemons and workers; nothing written to ~/.ray); a cluster's token is the one it was started
    with, which Ray reads from RAY_AUTH_TOKEN, RAY_AUTH_TOKEN_PATH or ~/.ray/auth_token. An older Ray has none:
    joining a cluster says so, since its ports then take calls from anyone who reaches them."""
    ray_version = installed_version("ray")
    version = tuple(int(part) for part in ray_version.split(".")[:2] if part.isdigit())
    if version < TOKEN_AUTHENTICATION:
        if not local:
            print(f"[ray] Ray {ray_version} has no token authentication (Ray >= 2.52): anyone who reaches the "
                  f"cluster's ports can run code on it; keep it on a network only its machines reach "
                  f"(docs/runs.md, 'What a run exposes').", flush=True)
        return
    if os.environ.setdefault("RAY_AUTH_MODE", "token") == "token" and local:
        os.environ["RAY_AUTH_TOKEN"] = secrets.token_hex(32)


def _init_local(temp_dir: str, wanted, common, host: str) -> None:
    import ray
    from ray._private import ray_constants

    if ipaddress.ip_address(host).is_loopback:
        # Ray >= 2.5x turns a loopback node address into the address this machine is reached at from outside
        # (`services.resolve_ip_for_localhost`), where nothing listens (every server here binds `host`), and then
        # waits forever for its GCS. A Ray that is not a cluster (Ray's own setting for Windows and macOS) keeps the
        # loopback address: this process reads the flag from ray_constants, Ray's daemons and workers from the
        # environment they inherit.
        os.environ[ray_constants.ENABLE_RAY_CLUSTERS_ENV_VAR] = "0"
        ray_constants.ENABLE_RAY_CLUSTER = False
    ray.init(
        address="local",  # never attach to a cluster found by RAY_ADDRESS or /tmp/ray: that takes --ray-address
        _node_ip_address=host,  # Ray's own servers listen on its node address
        _temp_dir=temp_dir,
        object_store_memory=_LOCAL_OBJECT_STORE_BYTES,
        resources={name: 1000.0 for name in wanted},
        # Ray lowers its workers' priority (niceness 15) under its daemons; nodes here run as Launchpad's do.
        _system_config={"worker_niceness": 0},
        **common,
    )


def _keep_temp_dir(temp_dir: str, run_dir: str) -> None:
    """Moves a fallback temp dir (Ray's logs) into the run directory, leaving its sockets behind.

    Ray's `session_latest` is an absolute link into `temp_dir`; the copy's points at the copied session instead
    (relatively, so the run directory can move), and replaces an earlier run's (a resumed run's second session)."""
    kept = os.path.join(run_dir, TEMP_DIR)
    latest = os.path.join(kept, "session_latest")
    if os.path.islink(latest):
        os.remove(latest)
    shutil.copytree(temp_dir, kept, ignore=shutil.ignore_patterns("sockets"), symlinks=True, dirs_exist_ok=True)
    shutil.rmtree(temp_dir, ignore_errors=True)
    if os.path.islink(latest):
        session = os.path.basename(os.readlink(latest))
        os.remove(latest)
        os.symlink(session, latest)


def run_ray_program(
    config: ExperimentConfig, num_actors: int, options: Optional[RayOptions], stop_timeout_s: float,
    bind_address: Optional[str] = None,
) -> Dict[str, Any]:
    """`launch.run_distributed(..., launch="ray")` after the shared run-directory preparation: runs the
    program on Ray, supervises it, and returns the summary (restarts and Ray's start-up time added). Raises
    `DistributedRunError` naming the node that failed or died. Ray is shut down, and the actors gone, in every case."""
    options = options or RayOptions()
    run_dir = config.run_dir
    graph = experiment_graph(config, num_actors)
    print(describe_graph(graph, options), flush=True)
    start = time.time()
    temp_dir, fallback = _start_ray(options, run_dir, bind_address)
    import ray  # after `_start_ray`, which sets Ray's authentication up before Ray is first imported

    init_seconds = time.time() - start
    program = RayProgram(graph, options)
    try:
        # After ray.init, which installs its own SIGTERM handler: ours go in on top, and come off before shutdown.
        with StopRequests() as stop:
            program.start()

            warned: Dict[str, Any] = {}  # the unstarted nodes last reported

            def every_period():
                supervisor.print_progress(run_dir, config)
                _write_placements(run_dir, program.state()[0])
                waiting = program.unplaced()
                if waiting and time.time() - start > _UNPLACED_WARNING_S and waiting != warned.get("last"):
                    warned["last"] = waiting
                    needs = "; ".join(f"{name} needs {needs or 'nothing special'}" for name, needs in waiting.items())
                    print(f"[ray] not started yet: {needs}. Does a Ray node offer these resources (`ray status`)?",
                          flush=True)

            dead = program.supervise(stop, every_period, config.progress_period_s)
            starts, ended_by = program.state()
            if stop.requested and not ended_by and not dead:  # every node is still up: checkpoint, then stop them
                supervisor.checkpoint_before_stopping(lambda: program.checkpoint(stop_timeout_s), run_dir,
                                                      stop.signal_name)
            _write_placements(run_dir, starts)
            program.stop(stop_timeout_s)
    finally:
        program.kill()
        ray.shutdown()
        if fallback:
            _keep_temp_dir(temp_dir, run_dir)
    wall = time.time() - start
    restarts = {name: len(runs) - 1 for name, runs in starts.items() if len(runs) > 1}
    logs = os.path.join(run_dir, TEMP_DIR, "session_latest", "logs") if not options.address else "the cluster's"
    return supervisor.conclude(
        config, num_actors, "ray", wall, stop, engine="Ray", logs_hint=f"{logs} (worker-*.err)",
        engine_failures={name: f"Ray: node {name!r} {why}\n" for name, why in program.died.items()},
        engine_failure=RuntimeError("a node's process died") if dead else None,
        restarts=restarts, ray_init_seconds=round(init_seconds, 2), ray_address=options.address or "local",
    )


def _write_placements(run_dir: str, starts) -> None:
    files.write_json(os.path.join(run_dir, PLACEMENT_FILE), placements(starts), indent=1)
