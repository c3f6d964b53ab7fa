"""SAC hyperparameters. The defaults reach an average return of -250 on Pendulum-v1 within 20k environment steps."""

import dataclasses
import functools
from typing import Optional, Tuple

from acmelike.config_checks import check_field
from agents.off_policy import check_off_policy_fields


@dataclasses.dataclass(frozen=True)
class SACConfig:
    """SAC's hyperparameters; every field can be set with `--config field=value`.

    Attributes:
      policy_learning_rate: Adam's step size for the policy; > 0.
      critic_learning_rate: Adam's step size for the twin critics; > 0.
      temperature_learning_rate: Adam's step size for log alpha, the entropy temperature's logarithm; >= 0. 0 keeps
        alpha fixed at initial_temperature (the first SAC paper's form, and Tianshou's MuJoCo runs).
      discount: gamma per environment step, in [0, 1]; folded into each transition's n-step discount.
      n_step: rewards summed into each transition before it bootstraps from the target critics (>= 1).
      batch_size: transitions per SGD step.
      num_sgd_steps_per_step: SGD steps fused into one learner step (`lax.scan`), each on its own batch.
      tau: Polyak averaging rate of the target critics per SGD step, in (0, 1].
      initial_temperature: the entropy temperature alpha before learning (learned as log alpha); > 0.
      target_entropy: the policy entropy (nats) alpha is tuned toward; None: -(number of action dimensions).
      policy_hidden_sizes: hidden layer sizes of the tanh-squashed Gaussian policy's MLP.
      critic_hidden_sizes: hidden layer sizes of each of the two critics' MLPs.
      min_replay_size: transitions the replay table holds before the learner samples from it.
      max_replay_size: transitions the replay table holds; beyond it the oldest are removed (>= min_replay_size).
      samples_per_insert: sampled transitions per inserted one; equal to batch_size: one SGD step per environment step.
      samples_per_insert_tolerance_rate: rate limiter slack, in units of min_replay_size * samples_per_insert samples.
      replay_table_name: name of the Reverb table (uniform replay) the adder writes to and the learner samples from.
      random_warmup_steps: actions drawn uniformly from the action bounds before the policy acts, counted per actor
        (Fujimoto et al.'s start_timesteps; SB3 and Tianshou warm up this way); 0: the policy acts from the start.
      variable_update_period: actor steps between fetches of the learner's parameters.
    """

    # Learning.
    policy_learning_rate: float = 1e-3
    critic_learning_rate: float = 1e-3
    temperature_learning_rate: float = 1e-3
    discount: float = 0.99
    n_step: int = 1
    batch_size: int = 256
    num_sgd_steps_per_step: int = 8
    tau: float = 0.005
    initial_temperature: float = 1.0
    target_entropy: Optional[float] = None
    policy_hidden_sizes: Tuple[int, ...] = (256, 256)
    critic_hidden_sizes: Tuple[int, ...] = (256, 256)
    # Replay.
    min_replay_size: int = 1_000
    max_replay_size: int = 1_000_000
    samples_per_insert: float = 256.0
    samples_per_insert_tolerance_rate: float = 0.1
    replay_table_name: str = "replay"
    # Acting.
    random_warmup_steps: int = 0
    variable_update_period: int = 1

    def __post_init__(self):
        check = functools.partial(check_field, self)
        check_off_policy_fields(self)
        for name in ("policy_learning_rate", "critic_learning_rate", "initial_temperature"):
            check(name, getattr(self, name) > 0, "> 0")
        check("temperature_learning_rate", self.temperature_learning_rate >= 0, ">= 0 (0: a fixed temperature)")
