"""CQLBuilder: discrete conservative Q-learning through the offline builder interface (its batches come from the
experiment)."""

from acmelike.actors import epsilon_greedy_core
from acmelike.learners import LearningParts
from agents.cql import learning
from agents.offline_builder import OfflineAgentBuilder


class CQLBuilder(OfflineAgentBuilder):
    """Learns DQN's Q-network offline; every policy acts greedily on it."""

    name = "CQL"

    def make_policy(self, *, networks, environment_spec, evaluation: bool = False):
        return epsilon_greedy_core(networks.q_network.apply, lambda steps: 0.0)

    def learning_parts(self, *, networks, environment_spec, random_key) -> LearningParts:
        return LearningParts(
            state=learning.init_training_state(networks, self.config, random_key),
            update_step=learning.make_update_step(networks, self.config),
            loss_keys=("loss",),
            policy_params=lambda state: state.params,
        )
