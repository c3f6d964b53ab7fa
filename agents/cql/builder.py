"""CQLBuilder: discrete conservative Q-learning through the one builder interface, from a Minari dataset."""

from acmelike.actors import epsilon_greedy_core
from acmelike.learners import SGDLearner
from agents.cql import learning
from agents.offline_builder import OfflineBuilder


class CQLBuilder(OfflineBuilder):
    """Learns DQN's Q-network offline; every policy acts greedily on it."""

    def make_policy(self, *, networks, environment_spec, evaluation: bool = False):
        return epsilon_greedy_core(networks.q_network.apply, lambda steps: 0.0)

    def make_learner(self, *, random_key, networks, dataset, environment_spec, replay_client=None, counter=None,
                     logger=None):
        return SGDLearner(
            state=learning.init_training_state(networks, self.config, random_key),
            update_step=learning.make_update_step(networks, self.config),
            iterator=dataset,
            variables={"policy": lambda state: state.params},
            num_sgd_steps_per_step=self.config.num_sgd_steps_per_step,
            counter=counter,
            logger=logger,
            name="CQL learner",
        )
