"""TD3 hyperparameters. The defaults reach an average return of -250 on Pendulum-v1 within 20k environment steps."""

import dataclasses
import functools
from typing import Tuple

from acmelike.config_checks import check_field
from agents.off_policy import check_off_policy_fields


@dataclasses.dataclass(frozen=True)
class TD3Config:
    """TD3's hyperparameters; every field can be set with `--config field=value`.

    Noise scales are fractions of each action dimension's half-range: actions live in the unit box [-1, 1] until
    they are rescaled to the environment's bounds.

    Attributes:
      policy_learning_rate: Adam's step size for the deterministic policy; > 0.
      critic_learning_rate: Adam's step size for the twin critics; > 0.
      discount: gamma per environment step, in [0, 1]; folded into each transition's n-step discount.
      n_step: rewards summed into each transition before it bootstraps from the target critics (>= 1).
      batch_size: transitions per SGD step.
      num_sgd_steps_per_step: SGD steps fused into one learner step (`lax.scan`), each on its own batch.
      tau: Polyak averaging rate of the target policy and critics per policy update, in (0, 1].
      policy_delay: critic updates per policy (and target) update (>= 1).
      target_noise: standard deviation of the target policy smoothing noise, in the unit action box; >= 0.
      target_noise_clip: the smoothing noise is clipped to [-target_noise_clip, target_noise_clip]; >= 0.
      policy_hidden_sizes: hidden layer sizes of the policy's MLP.
      critic_hidden_sizes: hidden layer sizes of each of the two critics' MLPs.
      min_replay_size: transitions the replay table holds before the learner samples from it.
      max_replay_size: transitions the replay table holds; beyond it the oldest are removed (>= min_replay_size).
      samples_per_insert: sampled transitions per inserted one; equal to batch_size: one SGD step per environment step.
      samples_per_insert_tolerance_rate: rate limiter slack, in units of min_replay_size * samples_per_insert samples.
      replay_table_name: name of the Reverb table (uniform replay) the adder writes to and the learner samples from.
      exploration_noise: standard deviation of the Gaussian noise added to actions while acting, in the unit box.
      random_warmup_steps: actions drawn uniformly from the action bounds before the policy acts, counted per actor
        (Fujimoto et al.'s start_timesteps; SB3 and Tianshou warm up this way); 0: the policy acts from the start.
      variable_update_period: actor steps between fetches of the learner's parameters.
    """

    # Learning.
    policy_learning_rate: float = 1e-3
    critic_learning_rate: float = 1e-3
    discount: float = 0.99
    n_step: int = 1
    batch_size: int = 256
    num_sgd_steps_per_step: int = 8
    tau: float = 0.005
    policy_delay: int = 2
    target_noise: float = 0.2
    target_noise_clip: float = 0.5
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
    exploration_noise: float = 0.1
    variable_update_period: int = 1

    def __post_init__(self):
        check = functools.partial(check_field, self)
        check_off_policy_fields(self)
        for name in ("policy_learning_rate", "critic_learning_rate"):
            check(name, getattr(self, name) > 0, "> 0")
        check("policy_delay", self.policy_delay >= 1, ">= 1")
        for name in ("target_noise", "target_noise_clip", "exploration_noise"):
            check(name, getattr(self, name) >= 0, ">= 0")
