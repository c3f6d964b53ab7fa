"""Discrete CQL hyperparameters (DQN's networks and double-Q target, plus the conservative penalty)."""

import dataclasses
import functools

from acmelike.config_checks import check_field
from agents.config_parts import Optimizer, SGDBatches, TorsoNetwork


@dataclasses.dataclass(frozen=True)
class CQLConfig(Optimizer, SGDBatches, TorsoNetwork):
    """Discrete CQL's hyperparameters; every field can be set with `--config field=value`.

    The Q-network is DQN's: the torso followed by a linear layer (or a dueling head) to the Q-values.

    Attributes:
      dataset_id: the local Minari dataset to learn from (set by `--dataset`).
      cql_alpha: weight of the conservative penalty logsumexp_a Q(s, a) - Q(s, a_data); 0 gives offline double DQN.
      discount: gamma per environment step, in [0, 1]; folded into the dataset's one-step discounts.
      target_update_period: SGD steps between copies of the online Q-network's parameters into the target network.
      huber_loss_parameter: the Huber loss's threshold on TD errors (quadratic below, linear above); 0: squared loss.
      dueling: a dueling head (DQN's: a state value plus mean-centred advantages) instead of one linear layer.
    """

    batch_size: int = 64
    dataset_id: str = ""
    cql_alpha: float = 1.0
    discount: float = 0.99
    target_update_period: int = 100
    huber_loss_parameter: float = 1.0
    max_gradient_norm: float = 10.0
    dueling: bool = False

    def __post_init__(self):
        super().__post_init__()
        check = functools.partial(check_field, self)
        check("cql_alpha", self.cql_alpha >= 0, ">= 0")
        check("discount", 0 <= self.discount <= 1, "in [0, 1]")
        check("target_update_period", self.target_update_period >= 1, ">= 1")
