"""SACBuilder: SAC through the one builder interface (uniform transition replay, see agents/off_policy.py)."""

from acmelike.actors import squashed_gaussian_core, uniform_warmup_core
from acmelike.learners import LearningParts
from acmelike.specs import EnvironmentSpec
from agents.off_policy import OffPolicyBuilder
from agents.sac import learning
from agents.sac.config import SACConfig
from agents.sac.networks import SACNetworks


class SACBuilder(OffPolicyBuilder):
    name = "SAC"

    def __init__(self, config: SACConfig = SACConfig()):
        super().__init__(config)

    def make_policy(self, *, networks: SACNetworks, environment_spec: EnvironmentSpec, evaluation: bool = False):
        core = squashed_gaussian_core(networks.policy.apply, networks.bounds, greedy=evaluation)
        warmup = 0 if evaluation else self.config.random_warmup_steps
        return uniform_warmup_core(core, networks.bounds, warmup)

    def learning_parts(self, *, networks: SACNetworks, environment_spec: EnvironmentSpec, random_key) -> LearningParts:
        return LearningParts(
            state=learning.init_training_state(networks, self.config, random_key),
            update_step=learning.make_update_step(networks, self.config),
            loss_keys=learning.LOSS_KEYS,
            policy_params=lambda state: state.policy_params,
        )
