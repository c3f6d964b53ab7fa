"""SAC hyperparameters. The defaults reach an average return of -250 on Pendulum-v1 within 20k environment steps."""

import dataclasses
import functools
from typing import Optional, Tuple

from acmelike.config_checks import check_field
from agents.off_policy import check_off_policy_fields


@dataclasses.dataclass(frozen=True)
class SACConfig:
    # Learning.
    policy_learning_rate: float = 1e-3
    critic_learning_rate: float = 1e-3
    temperature_learning_rate: float = 1e-3
    discount: float = 0.99
    n_step: int = 1
    batch_size: int = 256
    num_sgd_steps_per_step: int = 8  # SGD steps fused into one learner step (lax.scan)
    tau: float = 0.005  # Polyak averaging rate of the target critics
    initial_temperature: float = 1.0
    target_entropy: Optional[float] = None  # None: -(number of action dimensions)
    policy_hidden_sizes: Tuple[int, ...] = (256, 256)
    critic_hidden_sizes: Tuple[int, ...] = (256, 256)
    # Replay: `samples_per_insert` = batch_size gives one SGD step per environment step.
    min_replay_size: int = 1_000
    max_replay_size: int = 1_000_000
    samples_per_insert: float = 256.0
    samples_per_insert_tolerance_rate: float = 0.1
    replay_table_name: str = "replay"
    # Acting.
    variable_update_period: int = 1  # actor steps between parameter fetches

    def __post_init__(self):
        check = functools.partial(check_field, self)
        check_off_policy_fields(self)
        for name in ("policy_learning_rate", "critic_learning_rate", "temperature_learning_rate",
                     "initial_temperature"):
            check(name, getattr(self, name) > 0, "> 0")
