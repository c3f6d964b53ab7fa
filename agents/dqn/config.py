"""DQN hyperparameters. The defaults solve CartPole-v1 within 100k environment steps."""

import dataclasses
import functools
from typing import Tuple

from acmelike.config_checks import check_field
from agents.config_parts import NStepTargets, Optimizer, PrioritizedReplay, SGDBatches, TorsoNetwork, VariableUpdates

OPTIMIZERS = ("adam", "rmsprop")


@dataclasses.dataclass(frozen=True)
class DQNConfig(Optimizer, NStepTargets, SGDBatches, TorsoNetwork, PrioritizedReplay, VariableUpdates):
    """DQN's hyperparameters; every field can be set with `--config field=value`.

    The Q-network is the torso followed by a linear layer (or a dueling head) to the Q-values.

    Attributes:
      optimizer: one of OPTIMIZERS: "adam" (optax's defaults besides the step size), or "rmsprop", the centered
        RMSProp of the DQN papers as the MinAtar paper's code sets it (Young & Tian 2019: squared-gradient decay
        0.95, momentum 0.95, epsilon 0.01 added after the square root, as PyTorch does).
      target_update_period: SGD steps between copies of the online Q-network's parameters into the target network.
      huber_loss_parameter: the Huber loss's threshold on TD errors (quadratic below, linear above); 0: squared loss.
      dueling: the Q-values come from a dueling head (Wang et al. 2016: a state value plus mean-centred
        advantages) instead of one linear layer.
      priority_exponent: prioritized replay's alpha (sampled in proportion to |TD error| ** alpha); 0: uniform.
      epsilon_init: the acting policy's epsilon (chance of a random action) at an actor's first step; in [0, 1].
      epsilon_final: epsilon once `epsilon_decay_steps` have passed, in [0, 1].
      epsilon_decay_steps: steps of each environment over which epsilon falls linearly (with --num-envs N: divide by N).
      evaluation_epsilon: epsilon of the evaluation policy (evaluator, snapshots), in [0, 1].
    """

    n_step: int = 3
    batch_size: int = 64
    hidden_sizes: Tuple[int, ...] = (128, 128)
    max_replay_size: int = 100_000
    samples_per_insert: float = 16.0
    replay_table_name: str = "priority_table"
    variable_update_period: int = 10
    # Learning.
    optimizer: str = "adam"
    target_update_period: int = 100
    huber_loss_parameter: float = 1.0
    max_gradient_norm: float = 10.0
    dueling: bool = False
    # Acting.
    epsilon_init: float = 1.0
    epsilon_final: float = 0.01
    epsilon_decay_steps: int = 10_000
    evaluation_epsilon: float = 0.0

    def __post_init__(self):
        super().__post_init__()
        check = functools.partial(check_field, self)
        check("optimizer", self.optimizer in OPTIMIZERS, f"one of {OPTIMIZERS}")
        check("target_update_period", self.target_update_period >= 1, ">= 1")
        for name in ("epsilon_init", "epsilon_final", "evaluation_epsilon"):
            check(name, 0 <= getattr(self, name) <= 1, "in [0, 1]")
        check("epsilon_decay_steps", self.epsilon_decay_steps >= 1, ">= 1")
