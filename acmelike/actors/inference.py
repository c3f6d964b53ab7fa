"""Central batched inference (SEED RL, Espeholt et al., 2020): one server runs the policy for many actors.

    server = InferenceServer(policy, variable_client, max_batch_size=64, timeout_s=0.002)
    server.start()
    actor = InferenceClientActor(server, actor_id=0, random_key=key, num_envs=8, adder=adder)   # per actor
    actor = InferenceClientActor(server, actor_id=1, random_key=key, adder=adder)     # one environment
    ... EnvironmentLoop(vector_env, actor).run_episode() ...
    server.stop()

Actors send batched observations; the server queues requests and, in one thread, serves them in dynamic batches:
it takes the first waiting request, then more until the batch holds `max_batch_size` observations or `timeout_s`
has passed since the first, and runs ONE jitted call (`make_batched_step`, the same function a `GenericActor`
runs) for all of them. Each actor's core state (rng, exploration clock, recurrent state) lives on the server,
keyed by actor id and initialised from the actor's own key, so actions equal those of local inference with the
same parameters and keys. Batches are padded to `max_batch_size` rows, so the step compiles once.
"""

import queue
import threading
from typing import Dict, Optional

import jax
import numpy as np

from acmelike import core
from acmelike.actors.actor_core import ActorCore
from acmelike.actors.generic_actor import ActorShell, make_batched_step, sub_environment_keys


def _rows(tree) -> int:
    """The batch size of a nest of arrays (a multi-agent observation is a dict of per-agent nests)."""
    return len(jax.tree_util.tree_leaves(tree)[0])


class _Request:
    def __init__(self, actor_id, observations, starting, finished):
        self.actor_id, self.observations, self.starting, self.finished = actor_id, observations, starting, finished
        self.size = _rows(observations)
        self.done = threading.Event()
        self.result = None
        self.error: Optional[BaseException] = None


class InferenceServer:
    """Serves `select_action` for many actors in dynamic batches; see the module docstring.

    Args:
      actor_core: the agent's policy.
      variable_client: serves parameters (e.g. a `VariableClient` on the learner); updated before every batch,
        so its own `update_period` counts batches. None: a parameter-free core.
      max_batch_size: observations per batch (requests are never split: one larger than this is refused).
      timeout_s: the longest the first request of a batch waits for others.
    """

    def __init__(self, actor_core: ActorCore, variable_client, *, max_batch_size: int, timeout_s: float):
        if max_batch_size < 1 or timeout_s < 0:
            raise ValueError(f"InferenceServer: max_batch_size must be >= 1 and timeout_s >= 0, got {max_batch_size}, {timeout_s}.")
        self._core = actor_core
        self._variable_client = variable_client
        self._max_batch_size = max_batch_size
        self._timeout_s = timeout_s
        self._step = jax.jit(make_batched_step(actor_core))
        self._init = jax.jit(jax.vmap(actor_core.init))
        self._states: Dict[object, object] = {}
        self._requests: "queue.Queue[_Request]" = queue.Queue()
        self._stop = threading.Event()
        self._thread: Optional[threading.Thread] = None
        self.batch_sizes = []  # observations per served batch (for measurement)

    def register(self, actor_id, keys) -> None:
        """Creates actor `actor_id`'s state for `len(keys)` sub-environments, sub-environment i's from `keys[i]`
        (a `GenericActor` with `random_key` uses `sub_environment_keys(random_key, num_envs)`).
        Registering again replaces the actor's state."""
        keys = np.asarray(keys)
        if len(keys) > self._max_batch_size:
            raise ValueError(f"Actor {actor_id!r} steps {len(keys)} environments, more than max_batch_size {self._max_batch_size}.")
        self._states[actor_id] = self._init(keys)

    def select_action(self, actor_id, observations, starting, finished):
        """Blocks until the batch holding this request is served; returns (actions [n], extras [n])."""
        if actor_id not in self._states:
            raise KeyError(f"Actor {actor_id!r} is not registered with the inference server (call register first).")
        request = _Request(actor_id, jax.tree_util.tree_map(np.asarray, observations), np.asarray(starting),
                           np.asarray(finished))
        self._requests.put(request)
        while not request.done.wait(0.2):
            if self._stop.is_set():
                raise RuntimeError("The inference server stopped before serving this request.")
        if request.error is not None:
            raise request.error
        return request.result

    def start(self) -> None:
        self._thread = threading.Thread(target=self.run, name="inference-server", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()

    def run(self) -> None:
        """Serves batches until `stop()`. A batch that fails hands its error to each of its requests (every waiting
        actor re-raises it) and ends the server with it: a policy that cannot run must not fail quietly."""
        try:
            while not self._stop.is_set():
                try:
                    first = self._requests.get(timeout=0.1)
                except queue.Empty:
                    continue
                batch, size = [first], first.size
                deadline = _now() + self._timeout_s
                while size < self._max_batch_size:
                    try:
                        request = self._requests.get(timeout=max(0.0, deadline - _now()))
                    except queue.Empty:
                        break
                    if size + request.size > self._max_batch_size:
                        self._requests.put(request)  # waits for the next batch (order among actors is not kept)
                        break
                    batch.append(request)
                    size += request.size
                try:
                    self._serve(batch, size)
                except BaseException as error:
                    for request in batch:
                        request.error = error
                        request.done.set()
                    raise
        finally:
            self._stop.set()  # requests still waiting give up instead of waiting forever

    def _serve(self, batch, size: int) -> None:
        if self._variable_client is not None:
            self._variable_client.update()
        params = self._variable_client.params if self._variable_client is not None else None
        pad = self._max_batch_size - size

        def cat(parts):
            joined = np.concatenate(parts)
            return np.concatenate([joined, np.repeat(joined[-1:], pad, axis=0)]) if pad else joined

        observations = jax.tree_util.tree_map(lambda *x: cat(x), *[r.observations for r in batch])
        states = jax.tree_util.tree_map(lambda *x: cat([np.asarray(s) for s in x]), *[self._states[r.actor_id] for r in batch])
        starting = cat([r.starting for r in batch])
        finished = cat([r.finished for r in batch])
        actions, states, extras = jax.device_get(self._step(params, observations, states, starting, finished))
        self.batch_sizes.append(size)
        start = 0
        for request in batch:
            n = request.size
            rows = slice(start, start + n)
            self._states[request.actor_id] = jax.tree_util.tree_map(lambda x: x[rows], states)
            request.result = jax.tree_util.tree_map(lambda x: x[rows], (actions, extras))
            request.done.set()
            start += n


def _now() -> float:
    import time

    return time.monotonic()


class InferenceClientActor(ActorShell):
    """An actor whose policy runs on an `InferenceServer` (in this process, or behind a remote handle with the same
    `register`/`select_action` methods): it only steps environments and writes to replay.

    As a `GenericActor`, it acts for `num_envs` sub-environments with batched values, or (None) for one
    environment whose values carry no batch axis (see `ActorShell`). Registers `actor_id` with the server at its
    first action (not at construction: in a Launchpad program the inference node may not serve yet while nodes
    are built); the server keeps its core states, initialised from `sub_environment_keys(random_key, num_envs)`
    as a local actor's are, so it chooses the actions a `GenericActor` with the same key and parameters chooses.
    """

    def __init__(self, server, actor_id, random_key, num_envs: Optional[int] = None, adder=None):
        super().__init__(num_envs=num_envs, variable_client=None, adder=adder)  # parameters live on the server
        self._server = server
        self._actor_id = actor_id
        self._keys = np.asarray(sub_environment_keys(random_key, num_envs))  # numpy crosses process boundaries
        self._registered = False

    def _act(self, observations):
        if not self._registered:
            self._server.register(self._actor_id, self._keys)
            self._registered = True
        return self._server.select_action(self._actor_id, observations, self._starting, self._finished)
