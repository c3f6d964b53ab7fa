"""ExperimentConfig: everything a runner needs, as factories, so each process can build its own copy."""

import dataclasses
from typing import Any, Callable, Optional

import dm_env

from acmelike.builders import ActorLearnerBuilder
from acmelike.specs import EnvironmentSpec


@dataclasses.dataclass(frozen=True)
class ExperimentConfig:
    """One experiment, runnable by `run_single_process` (and by distributed runners).

    Attributes:
      builder: the agent.
      environment_factory: seed -> a dm_env environment. Called once per actor/evaluator, with distinct seeds.
      network_factory: environment spec -> the agent's networks. Raises ValueError when the spec does not fit.
      max_num_actor_steps: environment steps to train for (the run ends after the episode that reaches it).
      seed: seeds networks, actors and environments.
      evaluation_every: actor steps between evaluations with the evaluation policy; 0 disables evaluation.
      num_evaluation_episodes: episodes per evaluation.
      run_dir: where CSV logs, the learning-curve PNG and summary.json go; None writes nothing to disk.
      agent_name, environment_name: labels for logs and the summary.
      progress_period_s: seconds between progress lines on the terminal.
      stop_at_average_return: end training early once the last 20 episodes average at least this (None: never).
        A distributed program stops once an evaluation round averages at least this.
    """

    builder: ActorLearnerBuilder
    environment_factory: Callable[[int], dm_env.Environment]
    network_factory: Callable[[EnvironmentSpec], Any]
    max_num_actor_steps: int
    seed: int = 0
    evaluation_every: int = 0
    num_evaluation_episodes: int = 5
    run_dir: Optional[str] = None
    agent_name: str = "agent"
    environment_name: str = "environment"
    progress_period_s: float = 5.0
    stop_at_average_return: Optional[float] = None

    def actor_seed(self, index: int) -> int:
        """Seed of distributed actor `index`'s environment and policy."""
        return self.seed + 1 + index

    @property
    def evaluator_seed(self) -> int:
        """Seed of the evaluator's environment, far from every actor's (and its policy, when distributed)."""
        return self.seed + 1_000_003

    def __post_init__(self):
        if self.max_num_actor_steps < 1:
            raise ValueError(f"ExperimentConfig.max_num_actor_steps must be >= 1, got {self.max_num_actor_steps}.")
        if self.evaluation_every < 0:
            raise ValueError(f"ExperimentConfig.evaluation_every must be >= 0 (0 disables), got {self.evaluation_every}.")
        if self.num_evaluation_episodes < 1:
            raise ValueError(
                f"ExperimentConfig.num_evaluation_episodes must be >= 1, got {self.num_evaluation_episodes}."
            )
