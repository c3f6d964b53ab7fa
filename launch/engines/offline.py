"""run_offline: train an offline agent (BC, CQL) on a Minari dataset, evaluating it in the environment.

    python -m launch --agent bc --dataset cartpole/expert-v0 --env CartPole-v1 --steps 2000 --run-dir runs/bc

The same builder and learner shell as online agents; the learner's iterator is a `MinariIterator` instead of a
Reverb dataset, no actor writes anywhere, and `--steps` counts learner steps (each `num_sgd_steps_per_step` SGD
steps). The evaluator runs `num_evaluation_episodes` greedy episodes every `evaluation_every` learner steps; the
run stops at the budget or once an evaluation round averages at least `stop_at_average_return`.
"""

import functools
import time
from typing import Any, Dict, Optional, Sequence

import numpy as np

from acmelike.counting import Counter
from acmelike.loggers import CSVLogger, Dispatcher, NoOpLogger, TerminalLogger
from environment_loops import EnvironmentLoop
from launch.experiments.parts import AgentParts
from acmelike.wrappers import check_gymnasium_id, make_gymnasium_environment
from launch.experiments.config import ExperimentConfig
from launch.experiments.make import environment_threshold
from launch.experiments.overrides import apply_overrides
from launch.registry import agent_definition, offline_agents

DEFAULT_EVALUATION_EVERY = 250


def make_offline_config(
    *,
    agent: str,
    dataset: str,
    environment: str,
    learner_steps: int,
    seed: int = 0,
    run_dir: Optional[str] = None,
    evaluation_every: int = DEFAULT_EVALUATION_EVERY,
    num_evaluation_episodes: int = 10,
    stop_at_average_return: Optional[float] = None,
    config_overrides: Sequence[str] = (),
) -> ExperimentConfig:
    """An ExperimentConfig for an offline agent; `max_num_actor_steps` holds the learner-step budget."""
    definition = agent_definition(agent)
    if not definition.offline:
        raise ValueError(
            f"{agent} learns online, from its own actors: drop --dataset, or choose an offline agent: "
            f"{', '.join(offline_agents())}."
        )
    agent_config = apply_overrides(definition.config_class(), [f"dataset_id={dataset}", *config_overrides])
    check_gymnasium_id(environment)
    return ExperimentConfig(
        builder=definition.make_builder(agent_config),
        environment_factory=functools.partial(make_gymnasium_environment, environment),
        network_factory=functools.partial(definition.make_networks, config=agent_config),
        max_num_actor_steps=learner_steps,
        seed=seed,
        evaluation_every=evaluation_every,
        num_evaluation_episodes=num_evaluation_episodes,
        run_dir=run_dir,
        agent_name=agent,
        environment_name=environment,
        threshold=environment_threshold(environment),
        stop_at_average_return=stop_at_average_return,
    )


def run_offline(config: ExperimentConfig) -> Dict[str, Any]:
    """Trains on `config.agent_config.dataset_id`; returns the summary (also `<run_dir>/summary.json`)."""
    from acmelike.offline import check_dataset_fits
    from launch.lifecycle.snapshots import save_run_snapshot
    from launch.experiments.summaries import write_config, write_summary

    start = time.time()
    if config.run_dir:
        write_config(config, config.run_dir)
    parts = AgentParts(config)
    check_dataset_fits(config.agent_config.dataset_id, parts.spec)  # before any learning: a clear error
    counter = Counter(time_delta=0.0)
    learner = parts.learner(
        dataset=config.builder.make_dataset_iterator(replay_client=None, seed=config.seed),
        counter=Counter(counter, "learner", time_delta=0.0),
        logger=Dispatcher([CSVLogger(config.run_dir, "learner")]) if config.run_dir else NoOpLogger(),
    )
    loggers = [TerminalLogger("evaluator", time_delta=config.progress_period_s)]
    if config.run_dir:
        loggers.append(CSVLogger(config.run_dir, "evaluator"))
    evaluator = EnvironmentLoop(parts.evaluator_environment(), parts.evaluator_actor(variable_source=learner),
                                counter=Counter(counter, "evaluator", time_delta=0.0), logger=NoOpLogger())
    evaluator_logger = Dispatcher(loggers)
    rounds = []
    steps = 0
    while steps < config.max_num_actor_steps:
        learner.step()
        steps += 1
        if steps % config.evaluation_every == 0 or steps == config.max_num_actor_steps:
            learner.wait()
            evaluator.actor.update(wait=True)
            returns = [float(evaluator.run_episode()["episode_return"]) for _ in range(config.num_evaluation_episodes)]
            rounds.append((steps, float(np.mean(returns))))
            evaluator_logger.write(
                {"learner_steps": steps, "average_return": rounds[-1][1], "returns_min": min(returns)}
            )
            target = config.stop_at_average_return
            if target is not None and rounds[-1][1] >= target:
                break
    learner.wait()
    summary = {
        "agent": config.agent_name, "env": config.environment_name, "dataset": config.agent_config.dataset_id,
        "learner_steps": steps, "average_evaluation_return": rounds[-1][1] if rounds else None,
        "best_evaluation_return": max(r for _, r in rounds) if rounds else None,
        "evaluations": [[s, round(r, 2)] for s, r in rounds], "wall_seconds": round(time.time() - start, 2),
        "seed": config.seed, "config": config.agent_config_dict(),
    }
    if config.run_dir:
        save_run_snapshot(config, learner, parts.spec, steps)
        write_summary(config.run_dir, summary)
    return summary
