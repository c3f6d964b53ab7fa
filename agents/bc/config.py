"""Behavioural cloning hyperparameters (discrete actions)."""

import dataclasses
import functools
from typing import Tuple

from acmelike.config_checks import check_field


@dataclasses.dataclass(frozen=True)
class BCConfig:
    """BC's hyperparameters; every field can be set with `--config field=value`.

    Attributes:
      dataset_id: the local Minari dataset to clone (set by `--dataset`).
      learning_rate: Adam's step size; > 0.
      batch_size: transitions per SGD step.
      num_sgd_steps_per_step: SGD steps fused into one learner step (`lax.scan`), each on its own batch.
      hidden_sizes: hidden layer sizes of the policy MLP (observations to one logit per action).
      discount: gamma folded into the batches' discounts, which the BC loss ignores (no effect).
    """

    dataset_id: str = ""
    learning_rate: float = 1e-3
    batch_size: int = 64
    num_sgd_steps_per_step: int = 8
    hidden_sizes: Tuple[int, ...] = (64, 64)
    discount: float = 0.99

    def __post_init__(self):
        check = functools.partial(check_field, self)
        check("learning_rate", self.learning_rate > 0, "> 0")
        check("batch_size", self.batch_size >= 1, ">= 1")
        check("num_sgd_steps_per_step", self.num_sgd_steps_per_step >= 1, ">= 1")
        check("hidden_sizes", all(h >= 1 for h in self.hidden_sizes), "positive layer sizes")
