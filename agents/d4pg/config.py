"""D4PG hyperparameters. The defaults reach an average return of -250 on Pendulum-v1 within 30k environment steps."""

import dataclasses
import functools
from typing import Tuple

from acmelike.config_checks import check_field
from agents.off_policy import check_off_policy_fields


@dataclasses.dataclass(frozen=True)
class D4PGConfig:
    """D4PG's hyperparameters; every field can be set with `--config field=value`.

    The critic's categorical support is `num_atoms` values evenly spaced in [v_min, v_max]. Pendulum's returns
    (rewards in [-16.3, 0], discount 0.99) lie in [-1630, 0]; discounted values of states the agent visits are
    mostly above -1000. Noise scales are fractions of each action dimension's half-range (the unit box [-1, 1]).

    Attributes:
      policy_learning_rate: Adam's step size for the deterministic policy; > 0.
      critic_learning_rate: Adam's step size for the distributional critic; > 0.
      discount: gamma per environment step, in [0, 1]; folded into each transition's n-step discount.
      n_step: rewards summed into each transition before it bootstraps from the target critic (>= 1).
      batch_size: transitions per SGD step.
      num_sgd_steps_per_step: SGD steps fused into one learner step (`lax.scan`), each on its own batch.
      tau: Polyak averaging rate of the target policy and critic per SGD step, in (0, 1].
      num_atoms: atoms of the critic's categorical distribution over returns (>= 2).
      v_min: the lowest atom's value (the support's lower end).
      v_max: the highest atom's value (> v_min).
      dqda_clipping: bound on the L2 norm of each dQ/da in the policy gradient; 0 disables the clip.
      policy_hidden_sizes: hidden layer sizes of the policy's MLP.
      critic_hidden_sizes: hidden layer sizes of the critic's MLP.
      min_replay_size: transitions the replay table holds before the learner samples from it.
      max_replay_size: transitions the replay table holds; beyond it the oldest are removed (>= min_replay_size).
      samples_per_insert: sampled transitions per inserted one; equal to batch_size: one SGD step per environment step.
      samples_per_insert_tolerance_rate: rate limiter slack, in units of min_replay_size * samples_per_insert samples.
      priority_exponent: > 0: prioritized replay by the critic's cross-entropy, to this power (alpha); 0: uniform.
      importance_sampling_exponent: beta of the weights (1 / P) ** beta correcting prioritized sampling; in [0, 1].
      replay_table_name: name of the Reverb table the adder writes to and the learner samples from.
      exploration_noise: standard deviation of the Gaussian noise added to actions while acting, in the unit box.
      random_warmup_steps: actions drawn uniformly from the action bounds before the policy acts, counted per actor
        (Fujimoto et al.'s start_timesteps; SB3 and Tianshou warm up this way); 0: the policy acts from the start.
      variable_update_period: actor steps between fetches of the learner's parameters.
    """

    # Learning.
    policy_learning_rate: float = 1e-3
    critic_learning_rate: float = 1e-3
    discount: float = 0.99
    n_step: int = 5
    batch_size: int = 256
    num_sgd_steps_per_step: int = 8
    tau: float = 0.005
    num_atoms: int = 51
    v_min: float = -1000.0
    v_max: float = 0.0
    dqda_clipping: float = 0.0
    policy_hidden_sizes: Tuple[int, ...] = (256, 256)
    critic_hidden_sizes: Tuple[int, ...] = (256, 256)
    # Replay.
    min_replay_size: int = 1_000
    max_replay_size: int = 1_000_000
    samples_per_insert: float = 256.0
    samples_per_insert_tolerance_rate: float = 0.1
    priority_exponent: float = 0.0
    importance_sampling_exponent: float = 0.4
    replay_table_name: str = "replay"
    # Acting.
    random_warmup_steps: int = 0
    exploration_noise: float = 0.2
    variable_update_period: int = 1

    def __post_init__(self):
        check = functools.partial(check_field, self)
        check_off_policy_fields(self)
        for name in ("policy_learning_rate", "critic_learning_rate"):
            check(name, getattr(self, name) > 0, "> 0")
        check("num_atoms", self.num_atoms >= 2, ">= 2")
        check("v_max", self.v_max > self.v_min, "> v_min")
        check("dqda_clipping", self.dqda_clipping >= 0, ">= 0 (0 disables)")
        check("priority_exponent", self.priority_exponent >= 0, ">= 0 (0 gives uniform replay)")
        check("importance_sampling_exponent", 0 <= self.importance_sampling_exponent <= 1, "in [0, 1]")
        check("exploration_noise", self.exploration_noise >= 0, ">= 0")
