"""BCBuilder: behavioural cloning through the one builder interface, from a Minari dataset."""

from acmelike.actors import categorical_policy_core
from acmelike.learners import SGDLearner
from agents.bc import learning
from agents.offline_builder import OfflineBuilder


class BCBuilder(OfflineBuilder):
    """Clones the dataset's actions; the evaluation policy takes the most likely action."""

    def make_policy(self, *, networks, environment_spec, evaluation: bool = False):
        return categorical_policy_core(networks.policy_network.apply, greedy=evaluation)

    def make_learner(self, *, random_key, networks, dataset, environment_spec, replay_client=None, counter=None,
                     logger=None):
        return SGDLearner(
            state=learning.init_training_state(networks.policy_network, self.config, random_key),
            update_step=learning.make_update_step(networks.policy_network, self.config),
            iterator=dataset,
            variables={"policy": lambda state: state.params},
            num_sgd_steps_per_step=self.config.num_sgd_steps_per_step,
            counter=counter,
            logger=logger,
            name="BC learner",
        )
