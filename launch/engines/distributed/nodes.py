"""The nodes of a distributed program: learner, actor, evaluator and steps limiter.

Each node is constructed inside its own thread (local_mt), process (local_mp) or Ray actor from the experiment's
factories and the handles of the nodes it talks to, so only handles and picklable factories cross node boundaries.
The bodies name no engine (`launch.engines.distributed.runtime`). Every `run()` returns promptly once the program is stopping
(`runtime.stop_event()`), and every error is reported with the node's name by `report_failures`, a final save's
(the learner's last checkpoint and snapshot, an actor's last checkpoint) even while the program stops.
"""

import concurrent.futures
import contextlib
import os
import threading
import time
from typing import Dict, Optional

import jax
import numpy as np

from acmelike import core, files, placement
from acmelike.counting import Counter
from acmelike.placement import PlacedVariableSource
from acmelike.replay.remote import ReplayClosed
from acmelike.variables import RemoteVariableSource
from environment_loops import EnvironmentLoop
from launch.experiments.evaluation import Evaluator
from launch.lifecycle.logs import node_logger
from launch.lifecycle.snapshots import save_run_snapshot
from launch.experiments.parts import AgentParts
from launch.lifecycle.node_checkpoints import ActorCheckpoints, LearnerCheckpoints
from launch.lifecycle.run_directory import record_failure
from launch.engines.distributed import messages, runtime
from launch.experiments.config import ExperimentConfig

ENDED_FILE = "ended.json"  # written by the node that ends the program (see `end_program`)


def _stopping() -> bool:
    return runtime.stop_event().is_set()


class ProgramStopping(RuntimeError):
    """A call to another node was abandoned because the program is stopping."""


class StopAwareClient:
    """A courier client whose calls give up once the program stops.

    Courier clients wait for their server to be ready, so a call to a node that has already stopped would wait
    forever and keep this node from exiting (Launchpad then kills the whole runtime). Each call here waits on
    the call's future in short slices and raises `ProgramStopping` once the stop event is set.
    """

    def __init__(self, client, stop_event, poll_s: float = 0.2):
        self._client = client
        self._stop = stop_event
        self._poll_s = poll_s

    def __getattr__(self, method: str):
        if method.startswith("_"):
            raise AttributeError(method)
        start_call = getattr(self._client.futures, method)

        def call(*args, **kwargs):
            future = start_call(*args, **kwargs)
            while True:
                try:
                    return future.result(timeout=self._poll_s)
                except concurrent.futures.TimeoutError:
                    if self._stop.is_set():
                        _abandon(future)
                        raise ProgramStopping(f"call to {method}() abandoned: the program is stopping") from None

        return call


def _abandon(future, grace_s: float = 2.0) -> None:
    """Cancels a call the program's stop cut short, once a live server has had `grace_s` to answer it.

    Cancelling ends a call to a node that is gone (courier would wait for it forever, and the process could not
    exit). But courier completes futures from C++, where a result arriving for a cancelled future aborts the whole
    process: a central-inference actor always has a call in flight, answered within milliseconds while the
    inference node lives, so only a call still unanswered after the grace period is cancelled.
    """
    try:
        future.exception(timeout=grace_s)
    except (concurrent.futures.TimeoutError, concurrent.futures.CancelledError):
        future.cancel()


def _stop_aware(*clients):
    stop = runtime.stop_event()
    return [StopAwareClient(client, stop) for client in clients]


# Messages of the errors a call to another node ends with when that node has gone away (gRPC statuses, through
# Reverb's and courier's clients).
_GONE = ("unavailable", "cancelled", "socket closed", "failed to connect", "connection refused", "connection reset")


def cut_off_by_stop(error: BaseException) -> bool:
    """Whether `error` is a call to another node cut off because the program is stopping: ours (`ProgramStopping`),
    a Reverb error, or a connection's end. Such an error is a normal part of shutdown."""
    if isinstance(error, (ProgramStopping, ReplayClosed)) or type(error).__module__.startswith("reverb"):
        return True
    return isinstance(error, (ConnectionError, RuntimeError)) and any(word in str(error).lower() for word in _GONE)


@contextlib.contextmanager
def report_failures(node_name: str, run_dir: Optional[str], *, final_save: bool = False):
    """Names the node in any error it raises (stderr and `<run_dir>/failures/<node>.txt`), then re-raises.

    Errors raised while the program is already stopping (e.g. a Reverb call cut off by the replay node going
    away, or the replay server's answer that it closed, which may reach a node before the stop does) are a normal
    part of shutdown and are swallowed. Not in a `final_save` (a checkpoint or snapshot taken
    as the node ends): its failure is reported even then, and only a call cut off by the stop
    (`cut_off_by_stop`) is swallowed, so a run never ends without its last save unnoticed.
    """
    try:
        yield
    except BaseException as error:  # noqa: BLE001 - reported, then re-raised
        # The replay server closes only as its program stops, and its node may learn of the stop before this one.
        stopping = _stopping() or isinstance(error, ReplayClosed)
        if stopping and (not final_save or cut_off_by_stop(error)):
            return
        what = f"node {node_name!r}: its final save failed" if final_save else f"node {node_name!r} failed"
        record_failure(run_dir, node_name, what, error)
        raise


def make_replay_tables(config: ExperimentConfig) -> list:
    """The replay node's `reverb.Table`s: inserts may block, since actors and learner run concurrently."""
    from acmelike.replay.reverb_tables import to_reverb_table  # imports reverb: the replay node runs its server

    return [to_reverb_table(table) for table in AgentParts(config).replay_tables(inserts_may_block=True)]


def end_program(run_dir: Optional[str], node: str, reason: str, learner=None) -> None:
    """Ends the program because it is done, saying so in `<run_dir>/ended.json` first.

    With `learner` (a handle of the learner node), the run is checkpointed first, while every node is still up.

    Under Launchpad, stopping is a SIGTERM to the launcher, the same signal a user or a scheduler sends to
    interrupt a run: the launcher reads this file to tell a program that ended itself from one that was interrupted.
    """
    if learner is not None:
        learner.checkpoint()
    if run_dir:
        files.write_json(os.path.join(run_dir, ENDED_FILE), {"node": node, "reason": reason, "time": time.time()})
    runtime.stop_program()


def _csv_logger(run_dir: Optional[str], label: str):
    return node_logger(run_dir, label, step_key="learner_steps" if label == "learner" else "actor_steps")


class LearnerNode(core.Worker, core.VariableSource):
    """Steps the learner whenever a batch is ready; serves `get_variables` to actors and the evaluator."""

    def __init__(self, config: ExperimentConfig, replay, counter, run_dir: Optional[str]):
        self._run_dir = run_dir
        (counter,) = _stop_aware(counter)
        with report_failures("learner", run_dir):
            parts = AgentParts(config)
            self._config, self._spec = config, parts.spec
            self._counter = Counter(counter, "learner", time_delta=1.0)
            # The prefetch thread is the only one that waits on the rate limiter, so run() can always see a stop.
            self._iterator = parts.prefetched_dataset(replay)
            self._learner = parts.learner(
                dataset=self._iterator,
                replay_client=replay,
                counter=self._counter,
                logger=_csv_logger(run_dir, "learner"),
            )
            # Restores the training state when the run has a checkpoint (resumed, or this node restarted).
            self._checkpoints = LearnerCheckpoints(config, self._learner, self._counter, counter, replay, parts.spec)

    def get_variables(self, names):
        return jax.device_get(self._learner.get_variables(names))

    def checkpoint(self) -> Optional[str]:
        """Checkpoints the run now (a node ending the program calls this first); returns the path."""
        with report_failures("learner", self._run_dir, final_save=True):
            return self._checkpoints.save()

    def run(self) -> None:
        stop = runtime.stop_event()
        with report_failures("learner", self._run_dir):
            while not stop.is_set():
                if self._iterator.ready():
                    with self._checkpoints.lock:
                        self._learner.step()
                    self._checkpoints.save_if_due()
                else:
                    stop.wait(0.001)
            self._iterator.close(timeout=5.0)  # under local_mt the process outlives this node
            if self._run_dir:  # the trained policy, at the actor step last counted (no call to a stopped node)
                with report_failures("learner", self._run_dir, final_save=True):
                    step = int(self._counter.get_counts().get("actor_steps", 0))
                    save_run_snapshot(self._config, self._learner, self._spec, step)


class ActorNode(core.Worker):
    """One actor: its own environment and policy, an adder to replay, parameters from the learner. With an
    `inference` node (central inference) the policy runs there instead, and `learner` is not used (None)."""

    def __init__(
        self, config: ExperimentConfig, index: int, replay, learner, counter, run_dir: Optional[str], inference=None
    ):
        self._name = f"actor_{index}"
        self._run_dir = run_dir
        learner, counter = _stop_aware(learner, counter)
        with report_failures(self._name, run_dir):
            parts = AgentParts(config)
            self._adder = parts.adder(replay)
            if inference is None:
                source = PlacedVariableSource(RemoteVariableSource(learner), placement.plan().actors)
                self._actor = parts.actor(index, variable_source=source, adder=self._adder)
            else:
                server = InferenceNodeClient(*_stop_aware(inference))
                self._actor = parts.inference_client_actor(index, server=server, adder=self._adder)
            self._checkpoints = ActorCheckpoints(config, index, self._actor)  # restores the actor's own state
            self._loop = EnvironmentLoop(
                parts.actor_environment(index),
                self._actor,
                counter=Counter(counter, "actor", time_delta=1.0),
                logger=_csv_logger(run_dir, self._name),
                label=self._name,
            )

    def run(self) -> None:
        stop = runtime.stop_event()

        # An insert held back by the rate limiter waits on the learner, which stops sampling at the end: the
        # adder's waits must end when the program does.
        def interrupt_at_stop():
            stop.wait()
            self._adder.interrupt()

        threading.Thread(target=interrupt_at_stop, name=f"{self._name}-stop", daemon=True).start()
        with report_failures(self._name, self._run_dir):
            try:
                actor_steps = 0
                while not stop.is_set():
                    actor_steps = int(self._loop.run_episode()["actor_steps"])
                    self._checkpoints.after_episode(actor_steps)
                if actor_steps:
                    with report_failures(self._name, self._run_dir, final_save=True):
                        self._checkpoints.save(actor_steps)
            finally:
                # Under local_mt the process outlives this node (an interrupted episode ends it too): a Reverb
                # server stopping waits out a 5 s deadline on each writer stream still open. Closing sends what is
                # pending, which can wait forever on a queue the stopped learner no longer drains (IMPALA's); an
                # interrupted adder's close gives up after a few seconds, before Launchpad kills the runtime. The
                # stop thread above may not have run yet, hence the interrupt here.
                self._adder.interrupt()
                self._adder.close()
            # No final counter flush: the counter node may already be gone, and the budget has been met.


class EvaluatorNode(core.Worker):
    """Runs the evaluation policy on the learner's latest parameters every `evaluation_every` actor steps."""

    def __init__(self, config: ExperimentConfig, learner, counter, run_dir: Optional[str]):
        if config.evaluation_every < 1:
            raise ValueError("EvaluatorNode needs config.evaluation_every >= 1 (0 means: no evaluator node).")
        self._run_dir = run_dir
        self._config = config
        learner, counter = _stop_aware(learner, counter)
        self._counter, self._learner = counter, learner
        with report_failures("evaluator", run_dir):
            self._evaluator = Evaluator(
                config, AgentParts(config), logger=_csv_logger(run_dir, "evaluator"),
                variable_source=PlacedVariableSource(RemoteVariableSource(learner), placement.plan().actors),
            )

    def run(self) -> None:
        stop = runtime.stop_event()
        every = self._config.evaluation_every
        next_evaluation = every
        with report_failures("evaluator", self._run_dir):
            while not stop.is_set():
                actor_steps = int(self._counter.get_counts().get("actor_steps", 0))
                if actor_steps < next_evaluation:
                    stop.wait(0.5)
                    continue
                next_evaluation = (actor_steps // every + 1) * every
                self._evaluator.evaluate(actor_steps)
                average = self._evaluator.last_average
                target = self._config.stop_at_average_return
                if target is not None and average >= target:
                    end_program(self._run_dir, "evaluator", f"an evaluation round averaged {average:.1f} >= {target}",
                                self._learner)
                    return


class StepsLimiter(core.Worker):
    """Stops the program once actors have taken `max_num_actor_steps`; writes `progress.json` as it goes."""

    def __init__(self, counter, max_num_actor_steps: int, run_dir: Optional[str], period_s: float = 0.5,
                 learner=None):
        (self._counter,) = _stop_aware(counter)
        self._learner = _stop_aware(learner)[0] if learner is not None else None  # checkpoints the run at the end
        self._max = max_num_actor_steps
        self._run_dir = run_dir
        self._period_s = period_s

    def _write_progress(self, counts: Dict, done: bool) -> None:
        if self._run_dir:
            files.write_json(os.path.join(self._run_dir, "progress.json"),
                             {**counts, "done": done, "time": time.time()})

    def run(self) -> None:
        stop = runtime.stop_event()
        with report_failures("steps_limiter", self._run_dir):
            while not stop.is_set():
                counts = self._counter.get_counts()
                done = counts.get("actor_steps", 0) >= self._max
                self._write_progress(counts, done)
                if done:
                    end_program(self._run_dir, "steps_limiter", f"the step budget {self._max} was reached", self._learner)
                    return
                stop.wait(self._period_s)


class InferenceNode(core.Worker):
    """Central batched inference (SEED RL): holds the training policy's parameters, refreshed from the learner,
    and every actor's core state (rng, exploration clock, recurrent state), and serves the actors' `select_action`
    calls in dynamic batches of up to `max_batch_size` observations (`acmelike.actors.inference.InferenceServer`).
    Actors call it through an `InferenceNodeClient`.

    Arguments and results with arrays travel as `messages` (bytes of arrays and JSON, never a pickle: what an
    actor sends cannot run code here). Its methods block until their batch is served, so the engine must let the
    node serve many calls at once (Launchpad's courier servers run 16 handler threads; actors beyond those wait
    for a later batch).
    """

    def __init__(self, config: ExperimentConfig, max_batch_size: int, learner, run_dir: Optional[str]):
        self._run_dir = run_dir
        (learner,) = _stop_aware(learner)
        with report_failures("inference", run_dir):
            self._server = AgentParts(config).inference_server(
                variable_source=PlacedVariableSource(RemoteVariableSource(learner), placement.plan().inference),
                max_batch_size=max_batch_size,
            )

    def register(self, actor_id: int, keys: bytes) -> None:
        self._server.register(actor_id, messages.decode(keys))

    def select_action(self, actor_id: int, request: bytes) -> bytes:
        observations, starting, finished = messages.decode(request)
        return messages.encode(self._server.select_action(actor_id, observations, starting, finished))

    def run(self) -> None:
        stop = runtime.stop_event()
        # The server's own stop ends its loop and releases the calls still waiting on a batch.
        threading.Thread(target=lambda: (stop.wait(), self._server.stop()), name="inference-stop", daemon=True).start()
        with report_failures("inference", self._run_dir):
            self._server.run()


class InferenceNodeClient:
    """An actor's view of the inference node, with `InferenceServer`'s methods (`register`, `select_action`):
    arrays go and come back as `messages` (see `InferenceNode`); `handle` is a stop-aware client of the node."""

    def __init__(self, handle):
        self._handle = handle

    def register(self, actor_id: int, keys) -> None:
        self._handle.register(actor_id, messages.encode(np.asarray(keys)))

    def select_action(self, actor_id: int, observations, starting, finished):
        reply = self._handle.select_action(actor_id, messages.encode((observations, starting, finished)))
        return messages.decode(reply)
