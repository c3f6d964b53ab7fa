"""Evaluator: the evaluation round of every engine (single process, offline, a distributed program's evaluator node).

    evaluator = Evaluator(config, parts, variable_source=learner, logger=logger)
    returns = evaluator.evaluate(steps)          # one round: the learner's latest parameters, then the episodes

When a round runs is the engine's to say (after an episode past `evaluation_every` actor steps, every
`evaluation_every` learner steps offline, on the counter's actor steps in a distributed program); what a round is,
is said here once: the evaluation policy (`AgentParts.evaluator_actor`, its own seed and key stream) fetches the
learner's latest parameters, plays `num_evaluation_episodes` episodes in the evaluator's environment, and the
logger gets one row: the step the round ran at (`step_key`), the average return, the lowest one and the number of
episodes.
"""

from typing import List, Optional

import numpy as np

from acmelike import core
from acmelike.counting import Counter
from acmelike.loggers import NoOpLogger
from environment_loops import EnvironmentLoop
from launch.experiments.parts import AgentParts


class Evaluator:
    """Runs rounds of `config.num_evaluation_episodes` episodes of the evaluation policy on `variable_source`'s
    latest parameters, and logs one row per round (see the module docstring).

    Args:
      config: the run's `ExperimentConfig` or `OfflineExperimentConfig` (its `num_evaluation_episodes`).
      parts: the run's `AgentParts`: the evaluator's environment and actor.
      variable_source: where the evaluation actor fetches the learner's parameters from.
      logger: gets the row of each round.
      step_key: the name of the row's step column: "actor_steps", or "learner_steps" for an offline run.
      counter: counts the evaluator's own steps and episodes (in a run's root counter, they are checkpointed with
        it); None: a counter of its own.
    """

    def __init__(self, config, parts: AgentParts, *, variable_source: core.VariableSource, logger,
                 step_key: str = "actor_steps", counter: Optional[Counter] = None):
        self._num_episodes = config.num_evaluation_episodes
        self._step_key = step_key
        self._logger = logger
        self._loop = EnvironmentLoop(
            parts.evaluator_environment(), parts.evaluator_actor(variable_source=variable_source),
            counter=counter if counter is not None else Counter(time_delta=0.0), logger=NoOpLogger(),
        )
        self.last_average: Optional[float] = None  # the average return of the latest round (None before one)

    def evaluate(self, steps: int) -> List[float]:
        """One round at `steps` (what `step_key` counts): the learner's latest parameters, then the episodes;
        returns their returns (also `last_average`, and the logged row)."""
        self._loop.actor.update(wait=True)
        returns = [float(self._loop.run_episode()["episode_return"]) for _ in range(self._num_episodes)]
        self.last_average = float(np.mean(returns))
        self._logger.write({self._step_key: steps, "average_return": self.last_average, "returns_min": min(returns),
                            "episodes": len(returns)})
        return returns
