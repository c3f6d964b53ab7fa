"""ExperimentConfig: everything a runner needs, as factories, so each process can build its own copy."""

import dataclasses
from typing import Any, Callable, Dict, Optional

import dm_env

from acmelike.builders import ActorLearnerBuilder
from acmelike.specs import EnvironmentSpec

INFERENCE_MODES = ("local", "central")  # see ExperimentConfig.inference


@dataclasses.dataclass(frozen=True)
class ExperimentConfig:
    """One experiment, runnable by `run_single_process` and by `run_distributed`.

    Attributes:
      builder: the agent; `builder.config` holds its hyperparameters.
      environment_factory: seed -> a dm_env environment. Called once per actor/evaluator, with distinct seeds
        (`launch.experiments.parts` derives them).
      network_factory: environment spec -> the agent's networks. Raises ValueError when the spec does not fit.
      max_num_actor_steps: environment steps to train for (the run ends after the episode that reaches it).
      seed: seeds networks, actors and environments.
      evaluation_every: actor steps between evaluations with the evaluation policy; 0: no evaluator at all.
      num_evaluation_episodes: episodes per evaluation.
      run_dir: where CSV logs, the learning-curve PNG, config.json and summary.json go; None writes nothing.
      agent_name, environment_name: labels for logs and the summary.
      progress_period_s: seconds between progress lines on the terminal.
      threshold: the return that counts as solving the environment (gymnasium's `reward_threshold`, or the
        user's `--target-return`); the summary reports the first step at which the average reached it. None: none.
      return_window: episodes averaged for the summary's `average_return_last_<N>` and for `stop_at_average_return`.
      stop_at_average_return: end training early once the last `return_window` episodes average at least this
        (None: never). A distributed program stops once an evaluation round averages at least this.
      num_envs: environments each actor steps together (B); above 1, a batched actor (one policy call per vector
        step) and a batched adder (one replay write per B items); see `launch.experiments.parts`.
      vector_environment_factory: (num_envs=, seed=) -> a batched environment (e.g. gymnasium's numpy-vectorised
        one); None: `num_envs` environments from `environment_factory`, stepped one after another.
      inference: where a distributed program's actors' policy runs. "local": in each actor, on parameters it
        fetches from the learner. "central": on one inference node serving every actor in dynamic batches (SEED
        RL); actors then only step environments and write to replay. Single-process runs act locally.
      inference_timeout_s: central inference: the longest a batch waits for more actors' requests once it has one.
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
    threshold: Optional[float] = None
    return_window: int = 20
    stop_at_average_return: Optional[float] = None
    num_envs: int = 1
    vector_environment_factory: Optional[Callable[[int, int], dm_env.Environment]] = None
    inference: str = "local"
    inference_timeout_s: float = 0.002

    def __post_init__(self):
        for name, ok, allowed in (
            ("max_num_actor_steps", self.max_num_actor_steps >= 1, ">= 1"),
            ("evaluation_every", self.evaluation_every >= 0, ">= 0 (0: no evaluator)"),
            ("num_evaluation_episodes", self.num_evaluation_episodes >= 1, ">= 1"),
            ("return_window", self.return_window >= 1, ">= 1"),
            ("progress_period_s", self.progress_period_s > 0, "> 0"),
            ("num_envs", self.num_envs >= 1, ">= 1"),
            ("inference", self.inference in INFERENCE_MODES, f"one of {', '.join(INFERENCE_MODES)}"),
            ("inference_timeout_s", self.inference_timeout_s >= 0, ">= 0"),
        ):
            if not ok:
                raise ValueError(f"ExperimentConfig.{name} = {getattr(self, name)!r}; it must be {allowed}.")

    @property
    def agent_config(self) -> Any:
        """The agent's resolved hyperparameters (its frozen config dataclass)."""
        return self.builder.config

    def agent_config_dict(self) -> Dict[str, Any]:
        """The agent's config as JSON-ready data (tuples as lists)."""
        return dataclasses.asdict(self.agent_config)
