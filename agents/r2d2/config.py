"""R2D2 hyperparameters. The defaults learn CartPole with hidden velocities (acmelike/CartPoleNoVelocity-v1)."""

import dataclasses
import functools
from typing import Tuple

from acmelike.config_checks import check_field
from agents.config_parts import NStepTargets, Optimizer, PrioritizedReplay, TorsoNetwork, VariableUpdates


@dataclasses.dataclass(frozen=True)
class R2D2Config(NStepTargets, Optimizer, TorsoNetwork, PrioritizedReplay, VariableUpdates):
    """R2D2's hyperparameters; every field can be set with `--config field=value`.

    Replay holds sequences of `burn_in_length + trace_length + 1` steps, a new one every `sequence_period` steps
    (overlapping when the period is shorter). The burn-in only warms the LSTM state up; the last step only
    bootstraps. Each actor draws its epsilon once from the Ape-X set epsilon ** (1 + epsilon_alpha * i /
    (num_epsilons - 1)), i = 0 .. num_epsilons - 1. The optimiser is Adam; the network is the torso, then an LSTM,
    then the Q-values.

    Attributes:
      burn_in_length: steps at a sequence's start that only advance the stored LSTM state (no loss, no gradient).
      trace_length: steps per sequence that the loss covers, after the burn-in.
      sequence_period: steps between the starts of consecutive sequences an actor writes.
      batch_size: sequences per learner step (one SGD step).
      target_update_period: SGD steps between copies of the online network's parameters into the target network.
      rescaling_epsilon: eps of the value rescaling h(x) = sign(x)(sqrt(|x| + 1) - 1) + eps x; >= 0.
      lstm_size: units of the LSTM between the torso and the Q-value head.
      priority_eta: a sequence's priority is eta * max |TD| + (1 - eta) * mean |TD| over its steps; in [0, 1].
      priority_exponent: prioritized replay's alpha (sampled in proportion to priority ** alpha); 0: uniform.
      epsilon: the base of the actors' epsilons (the largest one), in [0, 1].
      epsilon_alpha: how fast the epsilons fall across actors (the exponent's alpha); >= 0.
      num_epsilons: size of the set of epsilons actors draw from (1: every actor uses `epsilon`).
      evaluation_epsilon: epsilon of the evaluation policy (evaluator, snapshots), in [0, 1].
    """

    # Sequences.
    burn_in_length: int = 4
    trace_length: int = 16
    sequence_period: int = 10
    # Learning.
    n_step: int = 3
    max_gradient_norm: float = 40.0
    batch_size: int = 32
    target_update_period: int = 200
    rescaling_epsilon: float = 1e-3
    # Network: torso -> LSTM -> Q-values.
    hidden_sizes: Tuple[int, ...] = (64,)
    lstm_size: int = 64
    # Prioritized sequence replay.
    priority_eta: float = 0.9
    priority_exponent: float = 0.9
    importance_sampling_exponent: float = 0.6
    min_replay_size: int = 100
    max_replay_size: int = 10_000
    samples_per_insert: float = 8.0
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
        super().__post_init__()
        check = functools.partial(check_field, self)
        check("burn_in_length", self.burn_in_length >= 0, ">= 0")
        check("trace_length", self.trace_length >= 1, ">= 1")
        check("sequence_period", self.sequence_period >= 1, ">= 1")
        check("batch_size", self.batch_size >= 1, ">= 1")
        check("target_update_period", self.target_update_period >= 1, ">= 1")
        check("rescaling_epsilon", self.rescaling_epsilon >= 0, ">= 0")
        check("lstm_size", self.lstm_size >= 1, ">= 1")
        check("priority_eta", 0 <= self.priority_eta <= 1, "in [0, 1]")
        for name in ("epsilon", "evaluation_epsilon"):
            check(name, 0 <= getattr(self, name) <= 1, "in [0, 1]")
        check("epsilon_alpha", self.epsilon_alpha >= 0, ">= 0")
        check("num_epsilons", self.num_epsilons >= 1, ">= 1")
