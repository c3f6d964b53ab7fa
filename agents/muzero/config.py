"""MuZero hyperparameters. The defaults learn CartPole-v1 (see agents/muzero/README.md for the measured runs)."""

import dataclasses
import functools
from typing import Tuple

from acmelike.config_checks import check_field
from agents.config_parts import Optimizer, PrioritizedReplay, VariableUpdates

BOOTSTRAPS = ("target_network", "search")
SEARCHES = ("gumbel", "puct")


@dataclasses.dataclass(frozen=True)
class MuZeroConfig(Optimizer, PrioritizedReplay, VariableUpdates):
    """MuZero's hyperparameters; every field can be set with `--config field=value`.

    Replay holds sequences of `num_unroll_steps + n_step + 1` steps, a new one every `sequence_period` steps. The
    learner unrolls the model `num_unroll_steps` (K) steps from each sequence's first observation along the stored
    actions; step k predicts the search's policy, the n-step value target and the reward of step k.

    Attributes:
      search: "gumbel" (Gumbel MuZero, `mctx.gumbel_muzero_policy`: the default, as it improves the policy with
        few simulations; see agents/muzero/README.md) or "puct" (the original MuZero search, `mctx.muzero_policy`).
      num_simulations: simulations of each search; >= 1.
      max_num_considered_actions: gumbel: actions Sequential Halving considers at the root (mctx caps it at the
        action count).
      gumbel_scale: gumbel: scale of the Gumbel noise on the root's actions while training (the exploration);
        >= 0. The evaluation policy searches without it.
      value_scale: gumbel: the policy improvement's sigma(q) = (50 + max visits) * value_scale * q (mctx's
        `qtransform_completed_by_mix_value`); > 0.
      rescale_q_values: gumbel: min-max normalise each node's Q-values to [0, 1] before sigma (mctx's default).
        With two actions that maps any difference, however small, to 0 and 1, so policy targets turn one-hot on
        the model's noise; off (the default here), sigma sees Q-values in reward units.
      dirichlet_alpha: puct: concentration of the Dirichlet noise on the root prior while training; > 0.
      dirichlet_fraction: puct: the noise's weight in the root prior while training, in [0, 1] (evaluation: 0).
      visit_temperature: puct: actions are drawn from visit counts ** (1 / T) while training; >= 0 (evaluation
        and 0: the most visited action). The policy target is the visit distribution either way.
      num_unroll_steps: K, the model's unroll in the learner (>= 1).
      n_step: rewards each value target sums before it bootstraps (>= 1).
      discount: gamma per environment step, in (0, 1]; also the search's discount per model step.
      value_bootstrap: what a value target bootstraps from after its n rewards: "target_network" (the target
        network's value of that observation, recomputed at every update) or "search" (the root value the actor's
        search found there, stored beside the step, as in the paper without Reanalyse; an episode's last
        observation has no search, so a truncated episode bootstraps from 0 there).
      reanalyse_fraction: the share of each batch's sequences (the first round(fraction x batch) of a random
        sample) whose policy targets at steps 0 .. K are recomputed at every SGD step by a search with the target
        network's parameters (MuZero Reanalyse, Schrittwieser et al., 2021), in [0, 1]; 0: the actors' stored
        searches only. Fresh value targets are value_bootstrap="target_network". Each reanalysed sequence costs
        K + 1 searches per SGD step.
      target_update_period: SGD steps between copies of the parameters into the target network.
      learning_rate: AdamW's step size (after clipping gradients to `max_gradient_norm`); > 0.
      weight_decay: AdamW's decoupled weight decay on all parameters (the paper's L2 regularisation); >= 0.
      batch_size: sequences per SGD step.
      value_loss_weight: weight of the value loss beside the policy and reward losses; > 0.
      embedding_size: size of the model's hidden state (min-max normalised to [0, 1], as in the paper).
      hidden_sizes: hidden layer sizes of the representation, dynamics and prediction MLPs.
      num_bins: atoms of the categorical value and reward supports (odd: one atom at 0); >= 3.
      max_value: the supports span [-max_value, max_value] in the rescaled space h(x) (10: |x| up to ~118); > 0.
      rescaling_epsilon: eps of h(x) = sign(x)(sqrt(|x| + 1) - 1) + eps x; >= 0.
      sequence_period: steps between the starts of consecutive sequences an actor writes.
      priority_exponent: prioritized replay's alpha (sampled in proportion to |value error| ** alpha); 0: uniform.
    """

    # Search.
    search: str = "gumbel"
    num_simulations: int = 16
    max_num_considered_actions: int = 16
    gumbel_scale: float = 1.0
    value_scale: float = 0.1
    rescale_q_values: bool = False
    dirichlet_alpha: float = 0.25
    dirichlet_fraction: float = 0.25
    visit_temperature: float = 1.0
    # Learning.
    num_unroll_steps: int = 5
    n_step: int = 30
    discount: float = 0.99
    value_bootstrap: str = "target_network"
    reanalyse_fraction: float = 0.0
    target_update_period: int = 100
    weight_decay: float = 1e-4
    max_gradient_norm: float = 5.0
    batch_size: int = 64
    value_loss_weight: float = 0.25
    # Networks.
    embedding_size: int = 64
    hidden_sizes: Tuple[int, ...] = (64,)
    num_bins: int = 41
    max_value: float = 10.0
    rescaling_epsilon: float = 1e-3
    # Prioritized sequence replay.
    sequence_period: int = 1
    min_replay_size: int = 500
    max_replay_size: int = 100_000
    samples_per_insert: float = 32.0
    replay_table_name: str = "muzero_sequences"

    @property
    def sequence_length(self) -> int:
        return self.num_unroll_steps + self.n_step + 1

    def __post_init__(self):
        super().__post_init__()
        check = functools.partial(check_field, self)
        for name in ("num_simulations", "num_unroll_steps", "n_step", "target_update_period", "batch_size",
                     "embedding_size", "sequence_period"):
            check(name, getattr(self, name) >= 1, ">= 1")
        check("max_num_considered_actions", self.max_num_considered_actions >= 2, ">= 2")
        check("search", self.search in SEARCHES, f"one of {SEARCHES}")
        check("gumbel_scale", self.gumbel_scale >= 0, ">= 0")
        check("dirichlet_alpha", self.dirichlet_alpha > 0, "> 0")
        check("dirichlet_fraction", 0 <= self.dirichlet_fraction <= 1, "in [0, 1]")
        check("visit_temperature", self.visit_temperature >= 0, ">= 0")
        check("discount", 0 < self.discount <= 1, "in (0, 1]")
        check("value_bootstrap", self.value_bootstrap in BOOTSTRAPS, f"one of {BOOTSTRAPS}")
        for name in ("value_scale", "value_loss_weight", "max_value"):
            check(name, getattr(self, name) > 0, "> 0")
        for name in ("weight_decay", "rescaling_epsilon"):
            check(name, getattr(self, name) >= 0, ">= 0")
        check("hidden_sizes", all(h >= 1 for h in self.hidden_sizes), "positive layer sizes")
        check("num_bins", self.num_bins >= 3 and self.num_bins % 2 == 1, "odd and >= 3")
        check("reanalyse_fraction", 0 <= self.reanalyse_fraction <= 1, "in [0, 1]")
