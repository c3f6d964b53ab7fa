"""MPOBuilder: MPO through the one builder interface (uniform transition replay, see agents/off_policy.py)."""

from acmelike.actors import uniform_warmup_core
from acmelike.learners import LearningParts
from acmelike.specs import EnvironmentSpec
from agents.mpo import learning
from agents.mpo.acting import clipped_gaussian_core
from agents.mpo.config import MPOConfig
from agents.mpo.networks import MPONetworks
from agents.off_policy import OffPolicyBuilder


class MPOBuilder(OffPolicyBuilder):
    name = "MPO"

    def __init__(self, config: MPOConfig = MPOConfig()):
        super().__init__(config)

    def make_policy(self, *, networks: MPONetworks, environment_spec: EnvironmentSpec, evaluation: bool = False):
        core = clipped_gaussian_core(networks.policy.apply, networks.bounds, greedy=evaluation)
        warmup = 0 if evaluation else self.config.random_warmup_steps
        return uniform_warmup_core(core, networks.bounds, warmup)

    def learning_parts(self, *, networks: MPONetworks, environment_spec: EnvironmentSpec, random_key) -> LearningParts:
        return LearningParts(
            state=learning.init_training_state(networks, self.config, random_key),
            update_step=learning.make_update_step(networks, self.config),
            loss_keys=learning.LOSS_KEYS,
            policy_params=lambda state: state.policy_params,
        )
