"""BCBuilder: behavioural cloning through the offline builder interface (its batches come from the experiment)."""

from acmelike.actors import categorical_policy_core
from acmelike.learners import LearningParts
from agents.bc import learning
from agents.offline_builder import OfflineAgentBuilder


class BCBuilder(OfflineAgentBuilder):
    """Clones the dataset's actions; the evaluation policy takes the most likely action."""

    name = "BC"

    def make_policy(self, *, networks, environment_spec, evaluation: bool = False):
        return categorical_policy_core(networks.policy_network.apply, greedy=evaluation)

    def learning_parts(self, *, networks, environment_spec, random_key) -> LearningParts:
        return LearningParts(
            state=learning.init_training_state(networks.policy_network, self.config, random_key),
            update_step=learning.make_update_step(networks.policy_network, self.config),
            loss_keys=("loss",),
            policy_params=lambda state: state.params,
        )
