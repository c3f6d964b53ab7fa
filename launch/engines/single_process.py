"""run_single_process: actor, learner and replay in one thread.

The learner is stepped from the actor's `observe`, whenever the replay can serve what one learner step samples
(the dataset iterator says how much: `samples_per_next`). The builder's tables pass through
`replay.never_blocking_inserts`, so rate limiters only ever hold back the learner: one thread never waits on
itself. The loop, in short:

    for each environment step:
        actor.observe(...)                         # the adder inserts into replay; never blocks
        while the dataset has a batch ready:
            learner.step()

The replay is `config.replay`:
- "local" (the default): the builder's tables served by a seeded, in-process `LocalReplay`. Sampling is
  synchronous and seeded by `config.seed`, so a run is bit-identical to another with the same seed, config,
  machine and stack; no gRPC round trip is paid per step, and neither Reverb nor TensorFlow is imported.
- "reverb": an embedded, in-process Reverb server, as distributed programs use, with a prefetch thread. Reverb's
  samplers are not seedable and the thread decides when a batch is drawn relative to inserts: runs are not
  repeatable. The server listens on `RunOptions.bind_address` (127.0.0.1: `launch.engines.bind_address`).
"""

import contextlib
import dataclasses
import functools
import tempfile
import time
from typing import Any, Iterator, Mapping, Optional

import jax

from acmelike import core, placement
from acmelike.counting import Counter
from acmelike.datasets import DatasetIterator
from acmelike.loggers.plotting import plot_run_learning_curve
from acmelike.replay.local import LocalReplay
from acmelike.variables import StaticVariableSource
from environment_loops import EnvironmentLoop
from launch.engines import bind_address
from launch.experiments.config import ExperimentConfig
from launch.experiments.evaluation import Evaluator
from launch.experiments.interrupts import StopRequests
from launch.experiments.parts import AgentParts
from launch.experiments.summaries import agent_returns, make_tracker, repeat_note, run_summary, summary_identity
from launch.lifecycle.checkpoints import RunLifecycle
from launch.lifecycle.run_directory import RunOptions, write_config


class RunResult(dict):
    """The summary of a run (a dict: JSON-ready, as printed and written to summary.json), plus what it trained.

        result = run_single_process(config)
        result["average_return_last_20"]
        params = result.params                    # the learner's final policy parameters
        actor = result.make_evaluation_actor()    # the evaluation (greedy) policy on those parameters

    Attributes:
      params: the parameters the learner serves as "policy" at the end of the run.
      parts: the `AgentParts` the run built (spec, networks, builder); `parts.policy(evaluation=True)` is the
        evaluation policy.
    """

    def __init__(self, summary: Mapping[str, Any], *, params: Any, parts: AgentParts):
        super().__init__(summary)
        self.params = params
        self.parts = parts

    def make_evaluation_actor(self) -> core.Actor:
        """An actor running the evaluation policy on `params` (no learner, no replay)."""
        return self.parts.evaluator_actor(variable_source=StaticVariableSource({"policy": self.params}))


class LearningActor(core.Actor):
    """An actor that steps the learner after each observation, as often as the replay tables allow.

    Args:
      iterator: the learner's dataset (`acmelike.datasets.DatasetIterator`): synchronous (a `LocalDataset`), or
        wrapped in a `Prefetcher`; either way `ready()` says whether `next()` returns at once.
      tables: the in-process tables, by name; `iterator.samples_per_next` says how many items of which table one
        learner step takes. A table that can serve them while the iterator is not ready means a prefetch thread
        is about to deliver: the actor waits for it rather than act on.
    """

    def __init__(self, actor: core.Actor, learner: core.Learner, iterator: DatasetIterator,
                 tables: Mapping[str, Any]):
        self._actor = actor
        self._learner = learner
        self._iterator = iterator
        self._requirements = [(tables[name], count) for name, count in iterator.samples_per_next.items()]

    def select_action(self, observation):
        return self._actor.select_action(observation)

    def observe_first(self, timestep):
        self._actor.observe_first(timestep)

    def observe(self, action, next_timestep):
        self._actor.observe(action, next_timestep)
        self._train()

    def update(self, wait: bool = False):
        self._actor.update(wait)

    def _train(self):
        while True:
            if self._iterator.ready():
                self._learner.step()
            elif all(table.can_sample(count) for table, count in self._requirements):
                time.sleep(1e-4)  # the tables will serve a batch: let the prefetch thread fetch it
            else:
                return


@dataclasses.dataclass
class _Replay:
    """What the runner needs of a replay: the client adders and learners talk to, the learner's dataset, and the
    tables by name (for `LearningActor`)."""

    client: Any
    dataset: Iterator
    tables: Mapping[str, Any]


@contextlib.contextmanager
def _local_replay(config: ExperimentConfig, parts: AgentParts, lifecycle: RunLifecycle):
    replay = LocalReplay(parts.replay_tables(inserts_may_block=False), seed=config.seed)
    restore_from = lifecycle.replay_to_restore()
    if restore_from is not None:
        replay.restore(restore_from)
    yield _Replay(client=replay, dataset=parts.dataset(replay), tables={name: replay.table(name)
                                                                         for name in replay.table_names})


@contextlib.contextmanager
def _reverb_replay(config: ExperimentConfig, parts: AgentParts, lifecycle: RunLifecycle):
    import reverb

    from acmelike.replay.reverb_tables import to_reverb_table  # imports reverb

    tables = [to_reverb_table(table) for table in parts.replay_tables(inserts_may_block=False)]
    # Without checkpoints, Reverb's default checkpointer would leave an empty directory in /tmp behind every run.
    scratch = tempfile.TemporaryDirectory(prefix="acmelike-reverb-")
    checkpointer = lifecycle.replay_checkpointer() or reverb.checkpointers.DefaultCheckpointer(scratch.name)
    host = bind_address.listen_on(lifecycle.options.bind_address, here=True)  # not every interface: 127.0.0.1
    server = reverb.Server(tables, port=None, checkpointer=checkpointer)
    iterator = None
    try:
        client = reverb.Client(f"{host}:{server.port}")
        iterator = parts.prefetched_dataset(client)
        yield _Replay(client=client, dataset=iterator, tables=lifecycle.sampleable_tables(tables))
    finally:
        if iterator is not None:
            # Its thread may wait on a table's rate limiter, holding the table and its worker threads: closed, it
            # lets go within the dataset's 1 s timeout, and they do not spin on in this process after the run. It
            # must end before the server stops: a sampler waiting on a stopped server's table never times out.
            iterator.close(timeout=5.0)
        server.stop()
        scratch.cleanup()


REPLAYS = {"local": _local_replay, "reverb": _reverb_replay}


def run_single_process(config: ExperimentConfig, options: RunOptions = RunOptions()) -> RunResult:
    """Trains `config.builder`'s agent for `config.max_num_actor_steps` environment steps in this process.

    With a run directory, `options` add checkpoints (and snapshots), resume and TensorBoard (`launch.lifecycle.checkpoints`).

    Returns the summary (`launch.experiments.summaries.run_summary`, also written to `<run_dir>/summary.json`; the
    resolved config goes to `<run_dir>/config.json`) as a `RunResult`, which also holds the trained parameters.
    Ctrl-C or SIGTERM ends the run at the next episode: logs, summary and learning curve are still written, and
    the summary says `"interrupted": true` with the signal's name. A final save that fails is in the summary's
    `failures` (and `<run_dir>/failures/final_save.txt`), not raised.

    With `config.replay == "local"` (the default) the run is bit-identical to any other with the same seed and
    config on the same machine and stack: episode returns, losses and final parameters (see the module docstring).
    """
    start = time.time()
    lifecycle = RunLifecycle(config, options)  # refuses a run directory holding another run, before writing
    if config.run_dir:
        write_config(config)
    parts = AgentParts(config)
    environment = parts.actor_environment(0)
    # Closed at the end, whatever happens: TensorBoard's buffered events reach disk and the CSV files are let go
    # (a notebook runs many runs in one process). Each is opened where the run needs it: the actor's CSV file
    # appears just before the first episode, as it always has.
    logs = []

    def opened(label: str, terminal: bool, step_key: str):
        logs.append(lifecycle.logger(label, step_key, terminal_period_s=config.progress_period_s if terminal else None))
        return logs[-1]

    with REPLAYS[config.replay](config, parts, lifecycle) as replay:
        adder = parts.adder(replay.client)
        try:
            counter = Counter(time_delta=0.0)
            learner = parts.learner(
                dataset=replay.dataset,
                replay_client=replay.client,
                counter=Counter(counter, "learner", time_delta=0.0),
                logger=opened("learner", False, "learner_steps"),
            )
            if config.replay == "local":
                learner.log_every_step()  # a time-throttled log would differ between identical runs
            policy_source = _policy_source(config, parts, learner)
            acting = parts.actor(0, variable_source=policy_source, adder=adder)
            actor = LearningActor(acting, learner, replay.dataset, replay.tables)
            train_loop = EnvironmentLoop(
                environment, actor, counter=Counter(counter, "actor", time_delta=0.0),
                logger=opened("actor", False, "actor_steps"),
            )
            evaluator = None
            if config.evaluation_every:
                evaluator = Evaluator(
                    config, parts, variable_source=policy_source, logger=opened("evaluator", True, "actor_steps"),
                    counter=Counter(counter, "evaluator", time_delta=0.0),  # in the root: checkpointed with it
                )
            tracker = make_tracker(config)
            lifecycle.start(learner=learner, actors={"0": acting}, counter=counter, tracker=tracker,
                            replay_client=replay.client, environment_spec=parts.spec)
            with StopRequests() as stop:
                _train(config, train_loop, evaluator, counter, tracker, lifecycle, stop)
            # A checkpoint at every clean stop; a save that fails is recorded, and the summary still written.
            failures = lifecycle.finish(int(counter.get_counts().get("actor_steps", 0)))
            params = learner.get_variables(["policy"])[0]
        finally:
            adder.close()  # an open Reverb writer stream makes server.stop() wait out its 5 s deadline
            for logger in logs:
                logger.close()

    extra = {"average_evaluator_return": evaluator.last_average} if evaluator is not None else {}
    summary = run_summary(
        summary_identity(config), tracker, counter.get_counts(), time.time() - start, launch="single", **extra,
        interrupted=stop.requested, **({"signal": stop.signal_name} if stop.requested else {}), failures=failures,
    )
    lifecycle.write_summary(summary, plot=functools.partial(_plot, config))
    return RunResult(summary, params=params, parts=parts)


def _policy_source(config: ExperimentConfig, parts: AgentParts, learner) -> core.VariableSource:
    """The learner as its actors' variable source, serving the policy's parameters on the device where a policy
    step measured fastest at start (`acmelike.placement.policy_device`). The learner's own values live on
    `plan().learner` (JAX's default device): when that wins, or is the only candidate (a CPU-only machine), the
    learner itself is returned, with no copy per fetch, and the run is exactly as without placement."""
    devices = placement.plan()
    timing = placement.policy_device(
        parts.policy(), learner.get_variables(["policy"])[0], parts.spec.observations, config.num_envs,
        candidates=(devices.learner, devices.actors), key=jax.random.PRNGKey(config.seed),
    )
    if timing.ms_per_step:
        print(f"[placement] {timing.describe(config.num_envs)}", flush=True)
    if timing.device == devices.learner:
        return learner
    return placement.PlacedVariableSource(learner, timing.device)


def _train(config: ExperimentConfig, train_loop, evaluator: Optional[Evaluator], counter: Counter, tracker,
           lifecycle: RunLifecycle, stop: StopRequests):
    steps = first_step = int(counter.get_counts().get("actor_steps", 0))  # > 0 when resumed
    next_evaluation = steps + config.evaluation_every
    last_print, start = time.time(), time.time()
    target = config.stop_at_average_return
    while steps < config.max_num_actor_steps and not stop.requested:
        if target is not None and tracker.is_full and tracker.average >= target:
            break
        result = train_loop.run_episode()
        steps = int(result["actor_steps"])
        tracker.add(result["episode_return"], steps, agent_returns(result))
        if evaluator is not None and steps >= next_evaluation:
            next_evaluation += config.evaluation_every
            evaluator.evaluate(steps)
        lifecycle.save_if_due(steps)
        now = time.time()
        if now - last_print >= config.progress_period_s:
            last_print = now
            counts = counter.get_counts()
            print(
                f"[{config.agent} {config.environment}] steps {steps:>8d} | episodes {tracker.episodes:>5d} | "
                f"return(avg{tracker.window}) {tracker.average:7.1f} | learner steps "
                f"{int(counts.get('learner_steps', 0)):>7d} | {(steps - first_step) / (now - start):7.0f} steps/s"
                + repeat_note(config.action_repeat),
                flush=True,
            )


def _plot(config: ExperimentConfig) -> None:
    plot_run_learning_curve(
        config.run_dir,
        actor_labels=["actor"],
        window=config.return_window,
        title=f"{config.agent} on {config.environment} (seed {config.seed})",
    )
