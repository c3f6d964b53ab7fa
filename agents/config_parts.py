"""The parts agent configs are composed of: replay, batches, targets, optimiser, networks, exploration, acting.

Each part is a frozen dataclass that carries its fields, the `Attributes:` line of each and its checks. An agent's
config inherits the parts it has, so every field keeps its flat name (`--config batch_size=512`, config.json,
presets) while its line and its check are written once:

    @dataclasses.dataclass(frozen=True)
    class TD3Config(OffPolicyActorCritic, GaussianExploration):
        policy_delay: int = 2          # the agent's own fields
        n_step: int = 3                # a part's field with this agent's default (it keeps its place and its line)

        def __post_init__(self):
            super().__post_init__()    # every part's checks
            ...                        # the agent's own checks

A part's default is the one most of its agents use; an agent that differs re-declares that field. Each part's
`__post_init__` runs its checks, then its bases' (`super().__post_init__()`), down to `ConfigPart`, so one call
from the agent's `__post_init__` checks every part. `--list-config` reads the lines of the whole class hierarchy
(`launch.experiments.overrides.docstring_attributes`); a line in the agent's own docstring replaces the part's.
"""

import dataclasses
import functools
from typing import Optional, Tuple

from acmelike.config_checks import check_field
from acmelike.networks.torsos import TORSO_NAMES


@dataclasses.dataclass(frozen=True)
class ConfigPart:
    """The base of every part: ends the chain of `__post_init__` checks."""

    def __post_init__(self):
        pass


@dataclasses.dataclass(frozen=True)
class SGDBatches(ConfigPart):
    """Transitions sampled in batches, several SGD steps per learner step.

    Attributes:
      batch_size: transitions per SGD step.
      num_sgd_steps_per_step: SGD steps fused into one learner step (`lax.scan`), each on its own batch.
    """

    batch_size: int = 256
    num_sgd_steps_per_step: int = 8

    def __post_init__(self):
        super().__post_init__()
        check_field(self, "batch_size", self.batch_size >= 1, ">= 1")
        check_field(self, "num_sgd_steps_per_step", self.num_sgd_steps_per_step >= 1, ">= 1")


@dataclasses.dataclass(frozen=True)
class NStepTargets(ConfigPart):
    """Targets that sum n discounted rewards, then bootstrap from a target network.

    Attributes:
      discount: gamma per environment step, in [0, 1]; an n-step target discounts its bootstrap by gamma ** n.
      n_step: rewards summed into each target before it bootstraps from the target network (>= 1).
    """

    discount: float = 0.99
    n_step: int = 1

    def __post_init__(self):
        super().__post_init__()
        check_field(self, "discount", 0 <= self.discount <= 1, "in [0, 1]")
        check_field(self, "n_step", self.n_step >= 1, ">= 1")


@dataclasses.dataclass(frozen=True)
class Replay(ConfigPart):
    """A replay table fed and sampled at a fixed ratio. An item is a transition, or a sequence (R2D2, MuZero).

    Attributes:
      min_replay_size: items (transitions or sequences) the replay table holds before the learner samples from it.
      max_replay_size: items the replay table holds; beyond it the oldest are removed (>= min_replay_size).
      samples_per_insert: items sampled per item inserted, held by the rate limiter; > 0. SGD steps per item
        inserted are samples_per_insert / batch_size (equal to batch_size: one SGD step per item).
      samples_per_insert_tolerance_rate: rate limiter slack, in units of min_replay_size * samples_per_insert samples.
      replay_table_name: name of the Reverb table the adder writes to and the learner samples from.
    """

    min_replay_size: int = 1_000
    max_replay_size: int = 1_000_000
    samples_per_insert: float = 256.0
    samples_per_insert_tolerance_rate: float = 0.1
    replay_table_name: str = "replay"

    def __post_init__(self):
        super().__post_init__()
        check = functools.partial(check_field, self)
        check("min_replay_size", self.min_replay_size >= 1, ">= 1")
        check("max_replay_size", self.max_replay_size >= self.min_replay_size, ">= min_replay_size")
        check("samples_per_insert", self.samples_per_insert > 0, "> 0")
        check("samples_per_insert_tolerance_rate", self.samples_per_insert_tolerance_rate >= 0, ">= 0")


@dataclasses.dataclass(frozen=True)
class PrioritizedReplay(Replay):
    """Replay sampled in proportion to each item's priority (the learner writes priorities back), or uniformly.

    Attributes:
      priority_exponent: prioritized replay's alpha (items sampled in proportion to priority ** alpha); 0: uniform.
      importance_sampling_exponent: beta of the weights (1 / P) ** beta correcting prioritized sampling; in [0, 1].
    """

    priority_exponent: float = 0.6
    importance_sampling_exponent: float = 0.4

    def __post_init__(self):
        super().__post_init__()
        check = functools.partial(check_field, self)
        check("priority_exponent", self.priority_exponent >= 0, ">= 0 (0 gives uniform replay)")
        check("importance_sampling_exponent", 0 <= self.importance_sampling_exponent <= 1, "in [0, 1]")


@dataclasses.dataclass(frozen=True)
class SequenceQueue(ConfigPart):
    """On-policy sequences through a queue: each learner step takes `batch_size` sequences once.

    Attributes:
      unroll_length: environment steps per sequence; each item holds `unroll_length + 1` (the last only bootstraps).
      batch_size: sequences per learner step.
      max_queue_size: sequences the queue holds (>= batch_size).
      replay_table_name: name of the Reverb queue the adder writes to and the learner reads from.
    """

    unroll_length: int = 32
    batch_size: int = 8
    max_queue_size: int = 64
    replay_table_name: str = "queue"

    def __post_init__(self):
        super().__post_init__()
        check = functools.partial(check_field, self)
        check("unroll_length", self.unroll_length >= 1, ">= 1")
        check("batch_size", self.batch_size >= 1, ">= 1")
        check("max_queue_size", self.max_queue_size >= self.batch_size, ">= batch_size")


@dataclasses.dataclass(frozen=True)
class Optimizer(ConfigPart):
    """One optimiser for the whole network, after clipping the gradients' global norm.

    Attributes:
      learning_rate: the optimiser's step size (after clipping gradients to `max_gradient_norm`); > 0.
      max_gradient_norm: global norm the gradients are clipped to before the optimiser's step; > 0.
    """

    learning_rate: float = 1e-3
    max_gradient_norm: float = 0.5

    def __post_init__(self):
        super().__post_init__()
        check_field(self, "learning_rate", self.learning_rate > 0, "> 0")
        check_field(self, "max_gradient_norm", self.max_gradient_norm > 0, "> 0")


@dataclasses.dataclass(frozen=True)
class TorsoNetwork(ConfigPart):
    """A network whose torso is an MLP on flat observations or a conv torso on images.

    Attributes:
      torso: the network's torso, one of TORSO_NAMES ("mlp", "nature_dqn", "impala_resnet", "minatar_conv"; conv
        torsos take images [H, W, C]).
      hidden_sizes: the MLP torso's hidden layer sizes (e.g. `--config hidden_sizes=64,64`; unused by conv torsos).
    """

    torso: str = "mlp"
    hidden_sizes: Tuple[int, ...] = (64, 64)

    def __post_init__(self):
        super().__post_init__()
        check_field(self, "torso", self.torso in TORSO_NAMES, f"one of {TORSO_NAMES}")
        check_field(self, "hidden_sizes", all(h >= 1 for h in self.hidden_sizes), "positive layer sizes")


@dataclasses.dataclass(frozen=True)
class ActorCriticLearning(ConfigPart):
    """A policy and a critic, each with its own Adam, and target networks that follow them by Polyak averaging.

    Attributes:
      policy_learning_rate: Adam's step size for the policy; > 0.
      critic_learning_rate: Adam's step size for the critic (for both, where there are twin critics); > 0.
      tau: Polyak averaging rate of the target networks per SGD step, in (0, 1].
    """

    policy_learning_rate: float = 1e-3
    critic_learning_rate: float = 1e-3
    tau: float = 0.005

    def __post_init__(self):
        super().__post_init__()
        for name in ("policy_learning_rate", "critic_learning_rate"):
            check_field(self, name, getattr(self, name) > 0, "> 0")
        check_field(self, "tau", 0 < self.tau <= 1, "in (0, 1]")


@dataclasses.dataclass(frozen=True)
class ActorCriticNetworks(ConfigPart):
    """The policy's and the critic's MLPs.

    Attributes:
      policy_hidden_sizes: hidden layer sizes of the policy's MLP.
      critic_hidden_sizes: hidden layer sizes of the critic's MLP (of each one, where there are twin critics).
    """

    policy_hidden_sizes: Tuple[int, ...] = (256, 256)
    critic_hidden_sizes: Tuple[int, ...] = (256, 256)

    def __post_init__(self):
        super().__post_init__()
        for name in ("policy_hidden_sizes", "critic_hidden_sizes"):
            sizes = getattr(self, name)
            check_field(self, name, len(sizes) >= 1 and all(h >= 1 for h in sizes), "one or more positive layer sizes")


@dataclasses.dataclass(frozen=True)
class EntropyTemperature(ConfigPart):
    """SAC's entropy temperature alpha, learned as log alpha toward a target entropy.

    Attributes:
      initial_temperature: the entropy temperature alpha before learning (learned as log alpha); > 0.
      target_entropy: the policy entropy (nats) alpha is tuned toward; None: -(number of action dimensions).
    """

    initial_temperature: float = 1.0
    target_entropy: Optional[float] = None

    def __post_init__(self):
        super().__post_init__()
        check_field(self, "initial_temperature", self.initial_temperature > 0, "> 0")


@dataclasses.dataclass(frozen=True)
class RandomWarmup(ConfigPart):
    """Uniformly random actions before the policy acts (continuous actions).

    Attributes:
      random_warmup_steps: actions drawn uniformly from the action bounds before the policy acts, counted per actor
        (Fujimoto et al.'s start_timesteps; SB3 and Tianshou warm up this way); 0: the policy acts from the start.
    """

    random_warmup_steps: int = 0

    def __post_init__(self):
        super().__post_init__()
        check_field(self, "random_warmup_steps", self.random_warmup_steps >= 0, ">= 0")


@dataclasses.dataclass(frozen=True)
class GaussianExploration(ConfigPart):
    """Gaussian noise on a deterministic policy's actions while acting.

    Attributes:
      exploration_noise: standard deviation of the Gaussian noise added to actions while acting, in the unit box.
    """

    exploration_noise: float = 0.1

    def __post_init__(self):
        super().__post_init__()
        check_field(self, "exploration_noise", self.exploration_noise >= 0, ">= 0")


@dataclasses.dataclass(frozen=True)
class VariableUpdates(ConfigPart):
    """How often actors fetch the learner's parameters.

    Attributes:
      variable_update_period: actor steps between fetches of the learner's parameters.
    """

    variable_update_period: int = 1

    def __post_init__(self):
        super().__post_init__()
        check_field(self, "variable_update_period", self.variable_update_period >= 1, ">= 1")


@dataclasses.dataclass(frozen=True)
class OffPolicyActorCritic(ActorCriticLearning, ActorCriticNetworks, NStepTargets, SGDBatches, Replay, RandomWarmup,
                           VariableUpdates):
    """What TD3, SAC, D4PG and MPO share: an actor-critic learning from n-step transitions in replay.

    The default samples_per_insert equals batch_size: one SGD step per environment step.
    """
