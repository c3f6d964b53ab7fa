"""PPOBuilder: PPO through the one builder interface."""

from acmelike.actors import categorical_policy_core
from acmelike.actors.actor_core import ActorCore
from acmelike.builders import ActorLearnerBuilder
from acmelike.learners import LearningParts
from acmelike.specs import EnvironmentSpec
from agents.on_policy import OnPolicyBuilder
from agents.ppo import learning
from agents.ppo.config import PPOConfig
from agents.ppo.networks import PPONetworks


class PPOBuilder(OnPolicyBuilder, ActorLearnerBuilder[PPONetworks, ActorCore]):
    """Sequences of `unroll_length + 1` steps through a Reverb queue; each learner step consumes `batch_size`."""

    name = "PPO"

    def __init__(self, config: PPOConfig = PPOConfig()):
        super().__init__(config)

    def make_policy(self, *, networks: PPONetworks, environment_spec: EnvironmentSpec, evaluation: bool = False):
        return categorical_policy_core(networks.logits, greedy=evaluation)

    def learning_parts(self, *, networks: PPONetworks, environment_spec: EnvironmentSpec, random_key) -> LearningParts:
        return LearningParts(
            state=learning.init_training_state(networks, self.config, random_key),
            update_step=learning.make_update_step(networks, self.config),
            loss_keys=("loss",),
            policy_params=lambda state: state.params,
        )
