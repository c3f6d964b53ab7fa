"""DQNBuilder: DQN through the one builder interface (prioritized n-step transition replay, agents/off_policy.py)."""

import optax

from acmelike.actors import epsilon_greedy_core
from acmelike.learners import LearningParts
from acmelike.specs import EnvironmentSpec
from agents.dqn import learning
from agents.dqn.config import DQNConfig
from agents.dqn.networks import DQNNetworks
from agents.off_policy import OffPolicyBuilder


class DQNBuilder(OffPolicyBuilder):
    """Prioritized n-step replay (`priority_exponent > 0`); the learner writes |TD| errors back as priorities."""

    name = "DQN"

    def __init__(self, config: DQNConfig = DQNConfig()):
        super().__init__(config)

    def make_policy(self, *, networks: DQNNetworks, environment_spec: EnvironmentSpec, evaluation: bool = False):
        c = self.config
        if evaluation:
            schedule = lambda steps: c.evaluation_epsilon  # noqa: E731
        else:
            schedule = optax.linear_schedule(c.epsilon_init, c.epsilon_final, c.epsilon_decay_steps)
        return epsilon_greedy_core(networks.q_network.apply, schedule)

    def learning_parts(self, *, networks: DQNNetworks, environment_spec: EnvironmentSpec, random_key) -> LearningParts:
        return LearningParts(
            state=learning.init_training_state(networks, self.config, random_key),
            update_step=learning.make_update_step(networks, self.config),
            loss_keys=("loss",),
            policy_params=lambda state: state.params,
        )
