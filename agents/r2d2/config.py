"""R2D2 hyperparameters. The defaults learn CartPole with hidden velocities (acmelike/CartPoleNoVelocity-v1)."""

import dataclasses
import functools
from typing import Tuple

from acmelike.config_checks import check_field
from acmelike.networks.torsos import TORSO_NAMES


@dataclasses.dataclass(frozen=True)
class R2D2Config:
    """R2D2's hyperparameters; every field can be set with `--config field=value`.

    Replay holds sequences of `burn_in_length + trace_length + 1` steps, a new one every `sequence_period` steps
    (overlapping when the period is shorter). The burn-in only warms the LSTM state up; the last step only
    bootstraps. Each actor draws its epsilon once from the Ape-X set epsilon ** (1 + epsilon_alpha * i /
    (num_epsilons - 1)), i = 0 .. num_epsilons - 1.

    Attributes:
      burn_in_length: steps at a sequence's start that only advance the stored LSTM state (no loss, no gradient).
      trace_length: steps per sequence that the loss covers, after the burn-in.
      sequence_period: steps between the starts of consecutive sequences an actor writes.
      learning_rate: Adam's step size (after clipping gradients to `max_gradient_norm`); > 0.
      discount: gamma per environment step, in [0, 1].
      n_step: rewards summed into each target before it bootstraps from the target network (>= 1).
      batch_size: sequences per learner step (one SGD step).
      target_update_period: SGD steps between copies of the online network's parameters into the target network.
      rescaling_epsilon: eps of the value rescaling h(x) = sign(x)(sqrt(|x| + 1) - 1) + eps x; >= 0.
      max_gradient_norm: global norm the gradients are clipped to before Adam; > 0.
      torso: the network's torso, one of TORSO_NAMES ("mlp", "nature_dqn", "impala_resnet",
        "minatar_conv"; conv torsos take images).
      hidden_sizes: the MLP torso's hidden layer sizes (unused by the conv torsos).
      lstm_size: units of the LSTM between the torso and the Q-value head.
      priority_eta: a sequence's priority is eta * max |TD| + (1 - eta) * mean |TD| over its steps; in [0, 1].
      priority_exponent: prioritized replay's alpha (sampled in proportion to priority ** alpha); 0: uniform.
      importance_sampling_exponent: beta of the weights (1 / P) ** beta correcting prioritized sampling; in [0, 1].
      min_replay_size: sequences the replay table holds before the learner samples from it.
      max_replay_size: sequences the replay table holds; beyond it the oldest are removed (>= min_replay_size).
      samples_per_insert: sequences sampled per sequence inserted, held by the rate limiter; > 0.
      samples_per_insert_tolerance_rate: rate limiter slack, in units of min_replay_size * samples_per_insert samples.
      replay_table_name: name of the Reverb table the adder writes to and the learner samples from.
      epsilon: the base of the actors' epsilons (the largest one), in [0, 1].
      epsilon_alpha: how fast the epsilons fall across actors (the exponent's alpha); >= 0.
      num_epsilons: size of the set of epsilons actors draw from (1: every actor uses `epsilon`).
      evaluation_epsilon: epsilon of the evaluation policy (evaluator, snapshots), in [0, 1].
      variable_update_period: actor steps between fetches of the learner's parameters.
    """

    # Sequences.
    burn_in_length: int = 4
    trace_length: int = 16
    sequence_period: int = 10
    # Learning.
    learning_rate: float = 1e-3
    discount: float = 0.99
    n_step: int = 3
    batch_size: int = 32
    target_update_period: int = 200
    rescaling_epsilon: float = 1e-3
    max_gradient_norm: float = 40.0
    # Network: torso -> LSTM -> Q-values.
    torso: str = "mlp"
    hidden_sizes: Tuple[int, ...] = (64,)
    lstm_size: int = 64
    # Prioritized sequence replay.
    priority_eta: float = 0.9
    priority_exponent: float = 0.9
    importance_sampling_exponent: float = 0.6
    min_replay_size: int = 100
    max_replay_size: int = 10_000
    samples_per_insert: float = 8.0
    samples_per_insert_tolerance_rate: float = 0.1
    replay_table_name: str = "r2d2_sequences"
    # Acting.
    epsilon: float = 0.4
    epsilon_alpha: float = 7.0
    num_epsilons: int = 8
    evaluation_epsilon: float = 0.0
    variable_update_period: int = 20

    @property
    def sequence_length(self) -> int:
        return self.burn_in_length + self.trace_length + 1

    def __post_init__(self):
        check = functools.partial(check_field, self)
        check("burn_in_length", self.burn_in_length >= 0, ">= 0")
        check("trace_length", self.trace_length >= 1, ">= 1")
        check("sequence_period", self.sequence_period >= 1, ">= 1")
        check("learning_rate", self.learning_rate > 0, "> 0")
        check("discount", 0 <= self.discount <= 1, "in [0, 1]")
        check("n_step", self.n_step >= 1, ">= 1")
        check("batch_size", self.batch_size >= 1, ">= 1")
        check("target_update_period", self.target_update_period >= 1, ">= 1")
        check("rescaling_epsilon", self.rescaling_epsilon >= 0, ">= 0")
        check("max_gradient_norm", self.max_gradient_norm > 0, "> 0")
        check("torso", self.torso in TORSO_NAMES, f"one of {TORSO_NAMES}")
        check("hidden_sizes", all(h >= 1 for h in self.hidden_sizes), "positive layer sizes")
        check("lstm_size", self.lstm_size >= 1, ">= 1")
        check("priority_eta", 0 <= self.priority_eta <= 1, "in [0, 1]")
        check("priority_exponent", self.priority_exponent >= 0, ">= 0 (0 gives uniform replay)")
        check("importance_sampling_exponent", 0 <= self.importance_sampling_exponent <= 1, "in [0, 1]")
        check("min_replay_size", self.min_replay_size >= 1, ">= 1")
        check("max_replay_size", self.max_replay_size >= self.min_replay_size, ">= min_replay_size")
        check("samples_per_insert", self.samples_per_insert > 0, "> 0")
        check("samples_per_insert_tolerance_rate", self.samples_per_insert_tolerance_rate >= 0, ">= 0")
        for name in ("epsilon", "evaluation_epsilon"):
            check(name, 0 <= getattr(self, name) <= 1, "in [0, 1]")
        check("epsilon_alpha", self.epsilon_alpha >= 0, ">= 0")
        check("num_epsilons", self.num_epsilons >= 1, ">= 1")
        check("variable_update_period", self.variable_update_period >= 1, ">= 1")
