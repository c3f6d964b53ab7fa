"""Behavioural cloning hyperparameters (discrete actions)."""

import dataclasses
import functools
from typing import Tuple

from acmelike.config_checks import check_field
from agents.config_parts import SGDBatches


@dataclasses.dataclass(frozen=True)
class BCConfig(SGDBatches):
    """BC's hyperparameters; every field can be set with `--config field=value`.

    Attributes:
      dataset_id: the local Minari dataset to clone (set by `--dataset`).
      learning_rate: Adam's step size; > 0.
      hidden_sizes: hidden layer sizes of the policy MLP (observations to one logit per action).
      discount: gamma folded into the batches' discounts, which the BC loss ignores (no effect).
    """

    batch_size: int = 64
    dataset_id: str = ""
    learning_rate: float = 1e-3
    hidden_sizes: Tuple[int, ...] = (64, 64)
    discount: float = 0.99

    def __post_init__(self):
        super().__post_init__()
        check = functools.partial(check_field, self)
        check("learning_rate", self.learning_rate > 0, "> 0")
        check("hidden_sizes", all(h >= 1 for h in self.hidden_sizes), "positive layer sizes")
