"""run_single_process: actor, learner and an in-process Reverb server in one thread.

The learner is stepped from the actor's `observe`, whenever every replay table can serve a whole batch. Tables
are built with `insert_may_block=False`, so the rate limiter only ever holds back the learner: one thread can
never wait on itself. The loop, in short:

    for each environment step:
        actor.observe(...)                         # the adder inserts into Reverb; never blocks
        while the dataset has a batch ready, or the tables can serve one:
            learner.step()                         # waits only for data the tables can serve
"""

import os
import time
from typing import Any, Dict, Iterable, Optional

import jax

from acmelike import core
from acmelike.counting import Counter
from acmelike.loggers import CSVLogger, Dispatcher, NoOpLogger, TerminalLogger
from acmelike.specs import make_environment_spec
from environment_loops import EnvironmentLoop
from launch.episode_stats import ReturnTracker, run_summary, write_summary
from launch.experiment import ExperimentConfig


class LearningActor(core.Actor):
    """An actor that steps the learner after each observation, as often as the replay tables allow."""

    def __init__(self, actor: core.Actor, learner: core.Learner, iterator, tables: Iterable, batch_sizes: Dict[str, int]):
        self._actor = actor
        self._learner = learner
        self._iterator = iterator  # a Prefetcher: ready() says whether next() returns at once
        self._tables = [(table, batch_sizes[table.name]) for table in tables]

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
            elif all(table.can_sample(batch_size) for table, batch_size in self._tables):
                time.sleep(1e-4)  # the tables will serve a batch: let the prefetch thread fetch it
            else:
                return


def _loggers(config: ExperimentConfig, label: str, terminal: bool):
    loggers = []
    if config.run_dir:
        loggers.append(CSVLogger(config.run_dir, label))
    if terminal:
        loggers.append(TerminalLogger(label, time_delta=config.progress_period_s))
    return Dispatcher(loggers) if loggers else NoOpLogger()


def run_single_process(config: ExperimentConfig) -> Dict[str, Any]:
    """Trains `config.builder`'s agent for `config.max_num_actor_steps` environment steps in this process.

    Returns the summary (also written to `<run_dir>/summary.json`): agent, env, env_steps, wall_seconds,
    average_return_last_20, steps_to_475, steps_per_second, learner_steps, episodes.
    """
    # Reverb (and with it TensorFlow) only here: importing `launch` stays light.
    import reverb

    from acmelike.replay import Prefetcher

    start = time.time()
    if config.run_dir:
        os.makedirs(config.run_dir, exist_ok=True)
    environment = config.environment_factory(config.seed)
    spec = make_environment_spec(environment)
    networks = config.network_factory(spec)  # raises if the spec does not fit the agent
    builder = config.builder
    learner_key, actor_key, evaluator_key = jax.random.split(jax.random.PRNGKey(config.seed), 3)

    tables = builder.make_replay_tables(environment_spec=spec, insert_may_block=False)
    server = reverb.Server(tables, port=None)
    adder = None
    try:
        client = reverb.Client(f"localhost:{server.port}")
        counter = Counter(time_delta=0.0)
        iterator = Prefetcher(builder.make_dataset_iterator(replay_client=client))
        learner = builder.make_learner(
            random_key=learner_key,
            networks=networks,
            dataset=iterator,
            environment_spec=spec,
            replay_client=client,
            counter=Counter(counter, "learner", time_delta=0.0),
            logger=_loggers(config, "learner", terminal=False),
        )
        adder = builder.make_adder(replay_client=client, environment_spec=spec)
        actor = builder.make_actor(
            random_key=actor_key,
            policy=builder.make_policy(networks=networks, environment_spec=spec),
            environment_spec=spec,
            variable_source=learner,
            adder=adder,
        )
        actor = LearningActor(actor, learner, iterator, tables, builder.batch_size_per_learner_step())
        train_loop = EnvironmentLoop(
            environment, actor, counter=Counter(counter, "actor", time_delta=0.0), logger=_loggers(config, "actor", False)
        )
        evaluator = None
        if config.evaluation_every:
            evaluation_actor = builder.make_actor(
                random_key=evaluator_key,
                policy=builder.make_policy(networks=networks, environment_spec=spec, evaluation=True),
                environment_spec=spec,
                variable_source=learner,
            )
            evaluator = EnvironmentLoop(
                config.environment_factory(config.evaluator_seed),
                evaluation_actor,
                logger=_loggers(config, "evaluator", terminal=True),
                label="evaluator",
            )
        tracker = _train(config, train_loop, evaluator, counter)
    finally:
        if adder is not None and hasattr(adder, "close"):
            adder.close()  # an open writer stream makes server.stop() wait out its 5 s deadline
        server.stop()

    summary = run_summary(config, tracker, counter.get_counts(), time.time() - start)
    if config.run_dir:
        write_summary(config.run_dir, summary)
        _plot(config)
    return summary


def _train(config: ExperimentConfig, train_loop, evaluator: Optional[EnvironmentLoop], counter: Counter):
    tracker = ReturnTracker()
    next_evaluation = config.evaluation_every
    last_print, start = time.time(), time.time()
    steps = 0
    target = config.stop_at_average_return
    while steps < config.max_num_actor_steps:
        if target is not None and tracker.is_full and tracker.average >= target:
            break
        result = train_loop.run_episode()
        steps = int(result["actor_steps"])
        tracker.add(result["episode_return"], steps)
        if evaluator is not None and steps >= next_evaluation:
            next_evaluation += config.evaluation_every
            evaluator.actor.update(wait=True)  # evaluate the learner's latest parameters
            for _ in range(config.num_evaluation_episodes):
                evaluator.run_episode()
        now = time.time()
        if now - last_print >= config.progress_period_s:
            last_print = now
            counts = counter.get_counts()
            print(
                f"[{config.agent_name} {config.environment_name}] steps {steps:>8d} | episodes {tracker.episodes:>5d} | "
                f"return(avg20) {tracker.average:7.1f} | learner steps {int(counts.get('learner_steps', 0)):>7d} | "
                f"{steps / (now - start):7.0f} steps/s",
                flush=True,
            )
    return tracker


def _plot(config: ExperimentConfig) -> None:
    from acmelike.loggers.plotting import plot_learning_curve

    csv_path = os.path.join(config.run_dir, "actor.csv")
    if os.path.exists(csv_path):
        plot_learning_curve(
            csv_path,
            os.path.join(config.run_dir, "learning_curve.png"),
            x="actor_steps",
            y="episode_return",
            window=20,
            title=f"{config.agent_name} on {config.environment_name} (seed {config.seed})",
        )
