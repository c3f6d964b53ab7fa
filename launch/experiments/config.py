"""The experiment configs: everything a runner needs, as factories, so each process can build its own copy.

    ExperimentConfig          an agent learning from its own actors (single process, distributed programs)
    OfflineExperimentConfig   an agent learning from a fixed dataset (`launch.engines.offline.run_offline`)

They are kept apart, as in Acme: an offline run has a learner-step budget and a dataset, and no actors, replay or
environment steps to count.
"""

import dataclasses
import numbers
from typing import Any, Callable, ClassVar, Dict, Iterator, Optional

import dm_env

from acmelike.builders import ActorLearnerBuilder, OfflineBuilder
from acmelike.specs import EnvironmentSpec
from acmelike.types import ReplaySample
from acmelike.wrappers import is_repeat_count
from launch.registry import AGENTS, agent_definition

INFERENCE_MODES = ("local", "central")  # see ExperimentConfig.inference
REPLAY_KINDS = ("local", "reverb")  # see ExperimentConfig.replay
# The largest seed: `jax.random.PRNGKey` (JAX 0.6 and 0.10, 64-bit types off) keeps only a seed's low 32 bits, so
# seed 2**32 would repeat seed 0's keys, and above 2**63 - 1 it raises OverflowError; gymnasium refuses negative
# seeds. Environment seeds derived from it (`launch.experiments.parts`) may exceed it: numpy takes any size.
MAX_SEED = 2**32 - 1


def check_seed(seed: int, name: str = "seed") -> None:
    """ValueError naming `name` unless `seed` is an integer from 0 to MAX_SEED (see there why)."""
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or not 0 <= seed <= MAX_SEED:
        raise ValueError(
            f"{name} = {seed!r}; a seed must be an integer from 0 to {MAX_SEED} (2**32 - 1): JAX's PRNGKey keeps "
            f"only 32 bits of it, and gymnasium refuses negative seeds. Choose a seed in that range."
        )


class _AgentAccess:
    """What both configs give about their agent, read off `builder.config`."""

    builder: Any
    agent_reference: Optional[str] = None  # ExperimentConfig's field (an offline run's agent is registered)

    @property
    def agent_config(self) -> Any:
        """The agent's resolved hyperparameters (its frozen config dataclass)."""
        return self.builder.config

    def agent_config_dict(self) -> Dict[str, Any]:
        """The agent's config as JSON-ready data (tuples as lists)."""
        return dataclasses.asdict(self.agent_config)

    def check_agent_name(self) -> None:
        """With a run directory, snapshots name the agent by `agent`, and loading one (or resuming the run)
        rebuilds the agent from its definition: a registered agent's by that name, your own from the definition you
        pass again (`agent_reference` records where it lives). So it must be registered, for this builder's config
        class, or come with a reference. Checked when the config is made, before anything is written (ValueError
        saying what to set)."""
        if not self.run_dir:
            return
        kind = type(self).__name__
        if self.agent not in AGENTS:
            if self.agent_reference is not None:
                return
            raise ValueError(
                f"{kind}.agent = {self.agent!r} is not a registered agent, and a run with run_dir writes "
                f"snapshots and checkpoints that name their agent. Pass your agent's AgentDefinition to "
                f"launch.make_experiment_config(agent=MY_AGENT, ...), which records where it lives; or set agent "
                f"to a registered agent (one of: {', '.join(sorted(AGENTS))}); or drop run_dir."
            )
        expected = agent_definition(self.agent).config_class
        if self.agent_reference is not None or not isinstance(self.agent_config, expected):
            raise ValueError(
                f"{kind}.agent {self.agent!r} names a registered agent configured by {expected.__name__}, "
                f"but the builder is {self.agent_reference or 'configured by ' + type(self.agent_config).__name__}: "
                f"a snapshot of this run would load the wrong agent. Give your agent a name of its own."
            )


@dataclasses.dataclass(frozen=True)
class ExperimentConfig(_AgentAccess):
    """One experiment, runnable by `run_single_process` and by `run_distributed`.

    Attributes:
      builder: the agent; `builder.config` holds its hyperparameters.
      environment_factory: seed -> a dm_env environment. Called once per actor/evaluator, with distinct seeds
        (`launch.experiments.parts` derives them).
      network_factory: environment spec -> the agent's networks. Raises ValueError when the spec does not fit.
      max_num_actor_steps: environment steps to train for (the run ends after the episode that reaches it).
      seed: seeds networks, actors and environments; 0 to MAX_SEED.
      evaluation_every: actor steps between evaluations with the evaluation policy; 0: no evaluator at all.
      num_evaluation_episodes: episodes per evaluation.
      run_dir: where CSV logs, the learning-curve PNG, config.json and summary.json go; None writes nothing.
      agent, environment: the agent's name and the environment's id (`--agent`, `--env`), which name the run in
        its logs, summary and snapshots.
      progress_period_s: seconds between progress lines on the terminal.
      target_return: the return that counts as solving the environment (the user's `--target-return`, else
        gymnasium's `reward_threshold`); the summary reports the first step at which the average reached it.
        None: none.
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
      replay: the single-process runner's replay. "local" (the default): the builder's tables in a seeded,
        in-process `acmelike.replay.local.LocalReplay`, sampled synchronously: the same seed gives a bit-identical
        run on the same machine and stack, and neither Reverb nor TensorFlow is imported. "reverb": an embedded,
        in-process Reverb server with a prefetch thread; not repeatable. A Launchpad program's nodes always
        share a Reverb server; a Ray program's replay node serves the local replay's tables unless this is "reverb"
        (`launch.engines.distributed.replay_node`).
      preset: the preset (`launch/presets/<name>.json`) whose values the agent's config started from; None: none.
        Recorded in config.json, so `--resume` keeps it.
      action_repeat: environment steps each of the agent's actions is applied for (1: every step is a decision).
        Above 1, every environment the runners build (`launch.experiments.parts`) is wrapped in
        `acmelike.wrappers.ActionRepeatWrapper`, so each of the agent's steps is that many environment steps with
        their rewards summed; every step count (`max_num_actor_steps`, `evaluation_every`, logs, the summary) then
        counts the agent's steps. Recorded in config.json and in snapshots, so a resumed run and `evaluate`
        repeat as the run did.
      agent_reference: for an agent of your own (an `AgentDefinition` not in `launch.registry`), where its
        definition lives, "module:attribute" (`make_experiment_config` fills it in); None for a registered agent.
        Recorded in config.json to say what to pass again: a run directory never names code to import, so resuming
        such a run takes the definition from you, never from the file (docs/runs.md).
    """

    builder: ActorLearnerBuilder
    environment_factory: Callable[[int], dm_env.Environment]
    network_factory: Callable[[EnvironmentSpec], Any]
    max_num_actor_steps: int
    seed: int = 0
    evaluation_every: int = 0
    num_evaluation_episodes: int = 5
    run_dir: Optional[str] = None
    agent: str = "agent"
    environment: str = "environment"
    progress_period_s: float = 5.0
    target_return: Optional[float] = None
    return_window: int = 20
    stop_at_average_return: Optional[float] = None
    num_envs: int = 1
    vector_environment_factory: Optional[Callable[[int, int], dm_env.Environment]] = None
    inference: str = "local"
    inference_timeout_s: float = 0.002
    replay: str = "local"
    preset: Optional[str] = None
    action_repeat: int = 1
    agent_reference: Optional[str] = None

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
            ("replay", self.replay in REPLAY_KINDS, f"one of {', '.join(REPLAY_KINDS)}"),
            ("action_repeat", is_repeat_count(self.action_repeat), "an int >= 1 (1: no repeat)"),
        ):
            if not ok:
                raise ValueError(f"ExperimentConfig.{name} = {getattr(self, name)!r}; it must be {allowed}.")
        check_seed(self.seed, "ExperimentConfig.seed")
        self.check_agent_name()


@dataclasses.dataclass(frozen=True)
class OfflineExperimentConfig(_AgentAccess):
    """One offline experiment, runnable by `launch.engines.offline.run_offline`: a learner stepping on a fixed
    dataset's batches, and an evaluator running the evaluation policy in the environment.

    Attributes:
      builder: the agent (an `OfflineBuilder`); `builder.config` holds its hyperparameters.
      environment_factory: seed -> a dm_env environment: the evaluator's (and, seeded `seed`, the spec's).
      network_factory: environment spec -> the agent's networks. Raises ValueError when the spec does not fit.
      dataset_factory: seed -> an endless iterator of the learner's batches (`ReplaySample`s), each holding one
        learner step's data. The one place an offline learner's data comes from (cf. Acme's
        `demonstration_dataset_factory`); `make_offline_experiment_config` builds it from a Minari dataset.
      dataset: names the dataset in config.json, the summary and `--resume` (e.g. the Minari id).
      max_num_learner_steps: learner steps to train for (each the agent's `num_sgd_steps_per_step` SGD steps).
      seed: seeds networks, the evaluator's environment and the dataset's sampling; 0 to MAX_SEED.
      evaluation_every: learner steps between evaluation rounds (also one at the budget); 0: no evaluator at all.
      num_evaluation_episodes: episodes per evaluation round.
      run_dir: where config.json, CSV logs, checkpoints, learning_curve.png and summary.json go; None writes nothing.
      agent, environment: the agent's name and the environment's id (`--agent`, `--env`), which name the run in
        its logs, summary and snapshots.
      progress_period_s: seconds between progress lines on the terminal.
      target_return: the return that counts as solving the environment; the summary reports the first learner step
        at which the last `return_window` evaluation episodes averaged at least this. None: none.
      return_window: evaluation episodes averaged for the summary's `average_return_last_<N>` (across rounds).
      stop_at_average_return: end training once an evaluation round averages at least this (None: never); needs
        `evaluation_every` > 0.
    """

    builder: OfflineBuilder
    environment_factory: Callable[[int], dm_env.Environment]
    network_factory: Callable[[EnvironmentSpec], Any]
    dataset_factory: Callable[[int], Iterator[ReplaySample]]
    dataset: str
    max_num_learner_steps: int
    seed: int = 0
    evaluation_every: int = 250
    num_evaluation_episodes: int = 10
    run_dir: Optional[str] = None
    agent: str = "agent"
    environment: str = "environment"
    progress_period_s: float = 5.0
    target_return: Optional[float] = None
    return_window: int = 10
    stop_at_average_return: Optional[float] = None
    # Not a field: the recorded steps' actions were not repeated, and the evaluator acts as they did.
    action_repeat: ClassVar[int] = 1

    def __post_init__(self):
        for name, ok, allowed in (
            ("dataset", bool(self.dataset), "a non-empty name"),
            ("max_num_learner_steps", self.max_num_learner_steps >= 1, ">= 1"),
            ("evaluation_every", self.evaluation_every >= 0, ">= 0 (0: no evaluator)"),
            ("num_evaluation_episodes", self.num_evaluation_episodes >= 1, ">= 1"),
            ("return_window", self.return_window >= 1, ">= 1"),
            ("progress_period_s", self.progress_period_s > 0, "> 0"),
        ):
            if not ok:
                raise ValueError(f"OfflineExperimentConfig.{name} = {getattr(self, name)!r}; it must be {allowed}.")
        check_seed(self.seed, "OfflineExperimentConfig.seed")
        if self.stop_at_average_return is not None and not self.evaluation_every:
            raise ValueError(
                f"OfflineExperimentConfig.stop_at_average_return = {self.stop_at_average_return} needs "
                f"evaluation_every > 0: evaluation rounds decide the stop (--eval-every N with --stop-at-return), "
                f"or drop the target."
            )
        self.check_agent_name()
