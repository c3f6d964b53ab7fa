"""IMPALA hyperparameters. The defaults solve CartPole-v1 within 300k environment steps."""

import dataclasses
import functools
from typing import Tuple

from acmelike.config_checks import check_field
from agents.config_parts import Optimizer, SequenceQueue, TorsoNetwork, VariableUpdates


@dataclasses.dataclass(frozen=True)
class IMPALAConfig(SequenceQueue, Optimizer, TorsoNetwork, VariableUpdates):
    """IMPALA's hyperparameters; every field can be set with `--config field=value`.

    The learning rate is annealed linearly to 0 over `learning_rate_decay_steps` learner steps, as in the IMPALA
    paper; each learner step consumes batch_size * unroll_length environment steps, so 7_500 ends the anneal at 300k
    steps. Adam's momentum keeps pushing in the direction of past batches; with actors acting a few updates behind
    (a distributed program) that overshoot feeds back through the stale data: set `adam_momentum_decay=0` there, as
    the IMPALA paper's RMSProp and Acme's IMPALA do (agents/impala/README.md: policy lag). Measured on CartPole-v1
    (5 seeds, 300k steps, this update fully jitted over 4 environments): with discount 0.99, lambda 1, gradients
    clipped at 40 and a constant rate, 2-3 seeds in 5 reached 400 and most fell back; with 0.98, 0.9, a 0.5 clip
    (bounding each update, as PPO's clip does) and the anneal, all 5 reached 400 (70k-147k steps) and ended at
    461-500. The network is the torso, then an LSTM, then the policy logits and the value.

    Attributes:
      batch_size: sequences per learner step (one SGD step).
      max_queue_size: sequences the queue holds (>= batch_size); the main policy lag when actors outpace the learner.
      learning_rate: Adam's initial step size (after clipping gradients to `max_gradient_norm`); > 0.
      learning_rate_decay_steps: learner steps over which the rate falls linearly to 0; 0 keeps it constant.
      adam_momentum_decay: Adam's b1, in [0, 1); 0 turns momentum off (for distributed programs, see above).
      adam_variance_decay: Adam's b2, in [0, 1).
      discount: gamma per environment step, in [0, 1].
      vtrace_lambda: V-trace's lambda, which scales the traces c_i (0: one-step targets); in [0, 1].
      clip_rho_threshold: V-trace's rho-bar, the clip on importance ratios pi / mu in the value targets; > 0.
      clip_pg_rho_threshold: the clip on importance ratios in the policy-gradient term; > 0.
      baseline_cost: weight of the value (baseline) loss in the total loss; >= 0.
      entropy_cost: weight of the entropy bonus in the total loss; >= 0.
      reward_scale: rewards are multiplied by it before V-trace, so the value head learns returns of that scale;
        > 0. The value starts near 0 and Adam moves it by about the learning rate a step: where the returns are far
        from 0 (-1 a step on Acrobot-v1: about -100 at gamma 0.99) every advantage is negative until the value gets
        there, and negative advantages push the policy back towards uniform. Acrobot-v1, seed 0, 100k steps: -498.8
        at 1 (the entropy stays near uniform's), -81.7 at 0.1.
      lstm_size: units of the LSTM between the torso and the policy and value heads.
    """

    # Data.
    unroll_length: int = 10
    batch_size: int = 4
    max_queue_size: int = 256
    replay_table_name: str = "impala_queue"
    # Learning.
    learning_rate: float = 2e-3
    learning_rate_decay_steps: int = 7_500
    adam_momentum_decay: float = 0.9
    adam_variance_decay: float = 0.999
    discount: float = 0.98
    vtrace_lambda: float = 0.9
    clip_rho_threshold: float = 1.0
    clip_pg_rho_threshold: float = 1.0
    baseline_cost: float = 0.25
    entropy_cost: float = 0.01
    reward_scale: float = 1.0
    # Network: torso -> LSTM -> policy logits and value.
    hidden_sizes: Tuple[int, ...] = (128,)
    lstm_size: int = 128

    def __post_init__(self):
        super().__post_init__()
        check = functools.partial(check_field, self)
        check("learning_rate_decay_steps", self.learning_rate_decay_steps >= 0, ">= 0 (0: constant)")
        check("adam_momentum_decay", 0 <= self.adam_momentum_decay < 1, "in [0, 1)")
        check("adam_variance_decay", 0 <= self.adam_variance_decay < 1, "in [0, 1)")
        check("discount", 0 <= self.discount <= 1, "in [0, 1]")
        check("vtrace_lambda", 0 <= self.vtrace_lambda <= 1, "in [0, 1]")
        check("clip_rho_threshold", self.clip_rho_threshold > 0, "> 0")
        check("clip_pg_rho_threshold", self.clip_pg_rho_threshold > 0, "> 0")
        check("baseline_cost", self.baseline_cost >= 0, ">= 0")
        check("entropy_cost", self.entropy_cost >= 0, ">= 0")
        check("reward_scale", self.reward_scale > 0, "> 0")
        check("lstm_size", self.lstm_size >= 1, ">= 1")
