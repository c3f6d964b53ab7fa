"""Continuous CQL: conservative Q-learning offline on SAC's networks and learning step (`--agent cql_continuous`).

    python -m launch --agent cql_continuous --dataset pendulum/mixed-v0 --env Pendulum-v1 --steps 1500
"""

import dataclasses
import functools
from typing import Tuple

from acmelike.actors import squashed_gaussian_core
from acmelike.builders import AgentDefinition
from acmelike.config_checks import check_field
from acmelike.learners import LearningParts
from agents.config_parts import ActorCriticLearning, EntropyTemperature, SGDBatches
from agents.cql import continuous_learning as learning
from agents.offline_builder import OfflineAgentBuilder
from agents.sac.networks import make_networks


@dataclasses.dataclass(frozen=True)
class ContinuousCQLConfig(ActorCriticLearning, EntropyTemperature, SGDBatches):
    """SAC's hyperparameters (agents.sac.config) for learning offline, plus the conservative penalty's.

    Measured on Pendulum-v1 from 10 expert (-150) plus 40 random (-1228) episodes, seed 0: evaluation averages of
    -1331, -1082, -839, -371 at learner steps 250 ... 1000 (then -1000, -425). Offline SAC (`cql_alpha=0`) does
    better on these data (-136 at 750): their expert episodes cover what Pendulum needs, so the penalty mostly
    slows learning here; a smaller `cql_alpha` was not measured.

    Attributes:
      dataset_id: the local Minari dataset to learn from (set by `--dataset`).
      cql_alpha: weight of the conservative penalty on the critics' loss; 0 gives offline SAC.
      num_sampled_actions: uniform actions, and as many policy actions, per state that estimate the log-sum-exp.
      temperature_learning_rate: Adam's step size for log alpha, the entropy temperature's logarithm; > 0.
      discount: gamma per environment step, in [0, 1]; folded into the dataset's one-step discounts.
      policy_hidden_sizes: hidden layer sizes of the tanh-squashed Gaussian policy's MLP.
      critic_hidden_sizes: hidden layer sizes of each of the two critics' MLPs.
    """

    batch_size: int = 128
    num_sgd_steps_per_step: int = 4
    dataset_id: str = ""
    cql_alpha: float = 5.0
    num_sampled_actions: int = 10
    temperature_learning_rate: float = 1e-3
    discount: float = 0.99
    policy_hidden_sizes: Tuple[int, ...] = (64, 64)
    critic_hidden_sizes: Tuple[int, ...] = (64, 64)

    def __post_init__(self):
        super().__post_init__()
        check = functools.partial(check_field, self)
        check("cql_alpha", self.cql_alpha >= 0, ">= 0")
        check("num_sampled_actions", self.num_sampled_actions >= 1, ">= 1")
        check("temperature_learning_rate", self.temperature_learning_rate > 0, "> 0")
        check("discount", 0 <= self.discount <= 1, "in [0, 1]")
        for name in ("policy_hidden_sizes", "critic_hidden_sizes"):
            check(name, all(h >= 1 for h in getattr(self, name)), "positive layer sizes")


class ContinuousCQLBuilder(OfflineAgentBuilder):
    """Learns SAC's policy and twin critics offline; the evaluation policy is the squashed Gaussian's mean."""

    name = "continuous CQL"

    def make_policy(self, *, networks, environment_spec, evaluation: bool = False):
        return squashed_gaussian_core(networks.policy.apply, networks.bounds, greedy=evaluation)

    def learning_parts(self, *, networks, environment_spec, random_key) -> LearningParts:
        return LearningParts(
            state=learning.init_training_state(networks, self.config, random_key),
            update_step=learning.make_update_step(networks, self.config),
            loss_keys=learning.LOSS_KEYS,
            policy_params=lambda state: state.policy_params,
        )


AGENT = AgentDefinition(
    name="cql_continuous",
    config_class=ContinuousCQLConfig,
    make_builder=ContinuousCQLBuilder,
    make_networks=make_networks,
    action_space="continuous",
    offline=True,
    smoke_config=dict(batch_size=8, num_sgd_steps_per_step=1, policy_hidden_sizes=(16,), critic_hidden_sizes=(16,)),
)
