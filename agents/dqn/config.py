"""DQN hyperparameters. The defaults solve CartPole-v1 within 100k environment steps."""

import dataclasses
import functools
from typing import Tuple

from acmelike.config_checks import check_field
from acmelike.networks.torsos import TORSO_NAMES

OPTIMIZERS = ("adam", "rmsprop")


@dataclasses.dataclass(frozen=True)
class DQNConfig:
    """DQN's hyperparameters; every field can be set with `--config field=value`.

    Attributes:
      learning_rate: the optimiser's step size (after clipping gradients to `max_gradient_norm`); > 0.
      optimizer: one of OPTIMIZERS: "adam" (optax's defaults besides the step size), or "rmsprop", the centered
        RMSProp of the DQN papers as the MinAtar paper's code sets it (Young & Tian 2019: squared-gradient decay
        0.95, momentum 0.95, epsilon 0.01 added after the square root, as PyTorch does).
      discount: gamma per environment step, in [0, 1]; folded into each transition's n-step discount.
      n_step: rewards summed into each transition before it bootstraps from the target network (>= 1).
      batch_size: transitions per SGD step.
      num_sgd_steps_per_step: SGD steps fused into one learner step (`lax.scan`), each on its own batch.
      target_update_period: SGD steps between copies of the online Q-network's parameters into the target network.
      huber_loss_parameter: the Huber loss's threshold on TD errors (quadratic below, linear above); 0: squared loss.
      max_gradient_norm: global norm the gradients are clipped to before the optimiser's step.
      torso: the Q-network's torso, one of TORSO_NAMES ("mlp" on flat observations; "nature_dqn", "impala_resnet",
        "minatar_conv" on images [H, W, C]), followed by a linear layer to the Q-values.
      dueling: the Q-values come from a dueling head (Wang et al. 2016: a state value plus mean-centred
        advantages) instead of one linear layer.
      hidden_sizes: the MLP torso's hidden layer sizes (e.g. `--config hidden_sizes=64,64`; unused by conv torsos).
      min_replay_size: transitions the replay table holds before the learner samples from it.
      max_replay_size: transitions the replay table holds; beyond it the oldest are removed (>= min_replay_size).
      samples_per_insert: sampled transitions per inserted one, held by the rate limiter; > 0.
      samples_per_insert_tolerance_rate: rate limiter slack, in units of min_replay_size * samples_per_insert samples.
      priority_exponent: prioritized replay's alpha (sampled in proportion to |TD error| ** alpha); 0: uniform.
      importance_sampling_exponent: beta of the weights (1 / P) ** beta correcting prioritized sampling; in [0, 1].
      replay_table_name: name of the Reverb table the adder writes to and the learner samples from.
      epsilon_init: the acting policy's epsilon (chance of a random action) at an actor's first step; in [0, 1].
      epsilon_final: epsilon once `epsilon_decay_steps` have passed, in [0, 1].
      epsilon_decay_steps: steps of each environment over which epsilon falls linearly (with --num-envs N: divide by N).
      evaluation_epsilon: epsilon of the evaluation policy (evaluator, snapshots), in [0, 1].
      variable_update_period: actor steps between fetches of the learner's parameters.
    """

    # Learning.
    learning_rate: float = 1e-3
    optimizer: str = "adam"
    discount: float = 0.99
    n_step: int = 3
    batch_size: int = 64
    num_sgd_steps_per_step: int = 8
    target_update_period: int = 100
    huber_loss_parameter: float = 1.0
    max_gradient_norm: float = 10.0
    torso: str = "mlp"
    hidden_sizes: Tuple[int, ...] = (128, 128)
    dueling: bool = False
    # Replay.
    min_replay_size: int = 1_000
    max_replay_size: int = 100_000
    samples_per_insert: float = 16.0
    samples_per_insert_tolerance_rate: float = 0.1
    priority_exponent: float = 0.6
    importance_sampling_exponent: float = 0.4
    replay_table_name: str = "priority_table"
    # Acting.
    epsilon_init: float = 1.0
    epsilon_final: float = 0.01
    epsilon_decay_steps: int = 10_000
    evaluation_epsilon: float = 0.0
    variable_update_period: int = 10

    def __post_init__(self):
        check = functools.partial(check_field, self)

        check("learning_rate", self.learning_rate > 0, "> 0")
        check("optimizer", self.optimizer in OPTIMIZERS, f"one of {OPTIMIZERS}")
        check("discount", 0 <= self.discount <= 1, "in [0, 1]")
        check("n_step", self.n_step >= 1, ">= 1")
        check("batch_size", self.batch_size >= 1, ">= 1")
        check("num_sgd_steps_per_step", self.num_sgd_steps_per_step >= 1, ">= 1")
        check("target_update_period", self.target_update_period >= 1, ">= 1")
        check("min_replay_size", self.min_replay_size >= 1, ">= 1")
        check("max_replay_size", self.max_replay_size >= self.min_replay_size, ">= min_replay_size")
        check("samples_per_insert", self.samples_per_insert > 0, "> 0")
        check("samples_per_insert_tolerance_rate", self.samples_per_insert_tolerance_rate >= 0, ">= 0")
        check("priority_exponent", self.priority_exponent >= 0, ">= 0 (0 gives uniform replay)")
        check("importance_sampling_exponent", 0 <= self.importance_sampling_exponent <= 1, "in [0, 1]")
        for name in ("epsilon_init", "epsilon_final", "evaluation_epsilon"):
            check(name, 0 <= getattr(self, name) <= 1, "in [0, 1]")
        check("epsilon_decay_steps", self.epsilon_decay_steps >= 1, ">= 1")
        check("variable_update_period", self.variable_update_period >= 1, ">= 1")
        check("torso", self.torso in TORSO_NAMES, f"one of {TORSO_NAMES}")
        check("hidden_sizes", all(h >= 1 for h in self.hidden_sizes), "positive layer sizes")
