"""run_offline: train an offline agent (BC, CQL) on a fixed dataset, evaluating it in the environment: a full run.

    config = make_offline_experiment_config(agent="bc", dataset="cartpole/expert-v0", environment="CartPole-v1",
                                            max_num_learner_steps=2_000, run_dir="runs/bc")
    summary = run_offline(config, RunOptions(checkpoint_every_minutes=5.0, tensorboard=True))

    python -m launch --agent bc --dataset cartpole/expert-v0 --env CartPole-v1 --steps 2000 --run-dir runs/bc
    python -m launch --resume runs/bc         # carries on from the latest checkpoint to the learner-step budget

The same builder interface and learner shell as online agents: the learner steps on `config.dataset_factory`'s
batches (no replay, no actors), so `--steps` counts learner steps. Every `evaluation_every` learner steps, and at
the budget, the evaluator runs `num_evaluation_episodes` episodes of the evaluation policy; with
`evaluation_every=0` there is no evaluator. The run stops at the budget, once an evaluation round averages at least
`stop_at_average_return`, or at Ctrl-C / SIGTERM (the summary then says `"interrupted": true` and the signal).

With a run directory, what a single-process run keeps (`launch.lifecycle.checkpoints.RunLifecycle`): checkpoints
of the learner's state, the counts and the evaluation rounds every `checkpoint_every_minutes` and at every stop,
resume, snapshots and TensorBoard; learner.csv, evaluator.csv (one row per round, against learner steps),
learning_curve.png (the rounds against learner steps) and summary.json. A final save that fails is in the
summary's `failures` (and `<run_dir>/failures/final_save.txt`), not raised.
"""

import functools
import os
import time
from typing import Any, Dict, List, Mapping, Optional, Tuple

import numpy as np

from acmelike import core
from acmelike.counting import Counter
from acmelike.loggers.plotting import plot_learning_curve
from launch.experiments.config import OfflineExperimentConfig
from launch.experiments.evaluation import Evaluator
from launch.experiments.interrupts import StopRequests
from launch.experiments.parts import AgentParts
from launch.experiments.summaries import ReturnTracker
from launch.lifecycle.checkpoints import RunLifecycle
from launch.lifecycle.run_directory import RunOptions, write_config


class EvaluationRounds(core.Saveable):
    """An offline run's evaluation rounds, (learner steps, average return) each, and their episodes' returns in a
    `ReturnTracker` (window `return_window`, against learner steps): what the summary is built from. Checkpointed
    with the run, as JSON data."""

    def __init__(self, config: OfflineExperimentConfig):
        self.rounds: List[Tuple[int, float]] = []
        self.tracker = ReturnTracker(config.return_window, config.target_return)

    def add(self, learner_steps: int, returns: List[float]) -> None:
        for episode_return in returns:
            self.tracker.add(episode_return, learner_steps)
        self.rounds.append((learner_steps, float(np.mean(returns))))

    def reached(self, target: Optional[float]) -> bool:
        """Whether the last round averaged at least `target` (never for None)."""
        return target is not None and bool(self.rounds) and self.rounds[-1][1] >= target

    def save(self) -> Dict[str, Any]:
        return {"rounds": [list(item) for item in self.rounds], "tracker": self.tracker.save()}

    def restore(self, state: Mapping[str, Any]) -> None:
        self.rounds = [(int(steps), float(average)) for steps, average in state["rounds"]]
        self.tracker.restore(state["tracker"])


def run_offline(config: OfflineExperimentConfig, options: RunOptions = RunOptions()) -> Dict[str, Any]:
    """Trains `config.builder`'s agent for `config.max_num_learner_steps` learner steps on `config.dataset_factory`'s
    batches; returns the summary (also `<run_dir>/summary.json`; the resolved config goes to `<run_dir>/config.json`).

    `options` as for `run_single_process`: checkpoints, resume (from the latest checkpoint, on to the budget) and
    TensorBoard, with a run directory.
    """
    start = time.time()
    lifecycle = RunLifecycle(config, options)  # refuses a run directory holding another run, before writing
    if config.run_dir:
        write_config(config)
    parts = AgentParts(config)
    counter = Counter(time_delta=0.0)
    # A resumed run draws other batches than its start did: the dataset's seed moves on with the steps done.
    learner = parts.learner(
        dataset=config.dataset_factory(config.seed + (lifecycle.resume_step or 0)),
        counter=Counter(counter, "learner", time_delta=0.0),
        logger=lifecycle.logger("learner", "learner_steps"),
    )
    # A seeded dataset makes an offline run bit-identical to another with the same seed; a time-throttled
    # log would still differ between the two. Offline runs take a few thousand learner steps.
    learner.log_every_step()
    evaluator = None
    if config.evaluation_every:  # else no evaluator at all, nor its logs
        evaluator = Evaluator(
            config, parts, variable_source=learner, step_key="learner_steps",
            logger=lifecycle.logger("evaluator", "learner_steps", terminal_period_s=config.progress_period_s),
            counter=Counter(counter, "evaluator", time_delta=0.0),
        )
    rounds = EvaluationRounds(config)
    lifecycle.start(learner=learner, actors={}, counter=counter, tracker=rounds, environment_spec=parts.spec)
    steps = int(counter.get_counts().get("learner_steps", 0))  # > 0 when resumed
    with StopRequests() as stop:
        steps = _train(config, learner, evaluator, rounds, steps, lifecycle, stop)
    learner.wait()
    # A checkpoint at every stop; a save that fails is recorded, and the summary still written.
    failures = lifecycle.finish(steps)
    summary = _summary(config, rounds, steps, time.time() - start, stop, failures)
    lifecycle.write_summary(summary, plot=functools.partial(_plot, config))
    return summary


def _train(config: OfflineExperimentConfig, learner: core.Learner, evaluator: Optional[Evaluator],
           rounds: EvaluationRounds, steps: int, lifecycle: RunLifecycle, stop: StopRequests) -> int:
    """Steps the learner from `steps` to the budget (evaluating on the way); returns the learner steps reached."""
    first_step, last_print, start = steps, time.time(), time.time()
    budget, every = config.max_num_learner_steps, config.evaluation_every
    while steps < budget and not stop.requested and not rounds.reached(config.stop_at_average_return):
        learner.step()
        steps += 1
        if evaluator is not None and (steps % every == 0 or steps == budget):
            learner.wait()
            rounds.add(steps, evaluator.evaluate(steps))
        lifecycle.save_if_due(steps)
        now = time.time()
        if now - last_print >= config.progress_period_s:
            last_print = now
            last = f"{rounds.rounds[-1][1]:7.1f}" if rounds.rounds else "   none"
            print(
                f"[{config.agent} {config.environment} offline] learner steps {steps:>7d}/{budget} | "
                f"last evaluation {last} | {(steps - first_step) / (now - start):6.1f} learner steps/s",
                flush=True,
            )
    return steps


def _summary(config: OfflineExperimentConfig, rounds: EvaluationRounds, steps: int, wall_seconds: float,
             stop: StopRequests, failures: List[Dict[str, Any]]) -> Dict[str, Any]:
    """agent, env, dataset, launch ("offline"), learner_steps, the last and best evaluation averages and every
    round, average_return_last_<N> (the last `return_window` evaluation episodes), threshold and
    learner_steps_to_threshold, wall_seconds, seed, the resolved agent config, failed (false), interrupted (and
    signal), failures."""
    averages = [average for _, average in rounds.rounds]
    tracker = rounds.tracker
    return {
        "agent": config.agent,
        "env": config.environment,
        "dataset": config.dataset,
        "launch": "offline",
        "learner_steps": steps,
        "average_evaluation_return": averages[-1] if averages else None,
        "best_evaluation_return": max(averages) if averages else None,
        "evaluations": [[step, round(average, 2)] for step, average in rounds.rounds],
        f"average_return_last_{tracker.window}": round(tracker.average, 2) if averages else None,
        "return_window": tracker.window,
        "threshold": tracker.threshold,
        "learner_steps_to_threshold": tracker.steps_to_threshold,
        "wall_seconds": round(wall_seconds, 2),
        "seed": config.seed,
        "config": config.agent_config_dict(),
        "failed": False,
        "interrupted": stop.requested,
        **({"signal": stop.signal_name} if stop.requested else {}),
        "failures": failures,
    }


def _plot(config: OfflineExperimentConfig) -> None:
    """learning_curve.png: the evaluation rounds' average returns against learner steps (none without rounds)."""
    evaluations = os.path.join(config.run_dir, "evaluator.csv")
    if os.path.exists(evaluations):
        plot_learning_curve(
            evaluations, os.path.join(config.run_dir, "learning_curve.png"), x="learner_steps", y="average_return",
            window=3, title=f"{config.agent} on {config.dataset} (offline, seed {config.seed})",
        )
