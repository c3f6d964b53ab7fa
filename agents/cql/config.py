"""Discrete CQL hyperparameters (DQN's networks and double-Q target, plus the conservative penalty)."""

import dataclasses
import functools
from typing import Tuple

from acmelike.config_checks import check_field


@dataclasses.dataclass(frozen=True)
class CQLConfig:
    dataset_id: str = ""  # the local Minari dataset to learn from (`--dataset`)
    cql_alpha: float = 1.0  # weight of the conservative penalty; 0 gives offline double DQN
    learning_rate: float = 1e-3
    discount: float = 0.99
    batch_size: int = 64
    num_sgd_steps_per_step: int = 8
    target_update_period: int = 100  # SGD steps between target-network copies
    huber_loss_parameter: float = 1.0
    max_gradient_norm: float = 10.0
    hidden_sizes: Tuple[int, ...] = (64, 64)

    def __post_init__(self):
        check = functools.partial(check_field, self)
        check("cql_alpha", self.cql_alpha >= 0, ">= 0")
        check("learning_rate", self.learning_rate > 0, "> 0")
        check("discount", 0 <= self.discount <= 1, "in [0, 1]")
        check("batch_size", self.batch_size >= 1, ">= 1")
        check("num_sgd_steps_per_step", self.num_sgd_steps_per_step >= 1, ">= 1")
        check("target_update_period", self.target_update_period >= 1, ">= 1")
        check("hidden_sizes", all(h >= 1 for h in self.hidden_sizes), "positive layer sizes")
