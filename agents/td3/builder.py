"""TD3Builder: TD3 through the one builder interface (uniform transition replay, see agents/off_policy.py)."""

from acmelike.actors import gaussian_noise_core, uniform_warmup_core
from acmelike.learners import LearningParts
from acmelike.specs import EnvironmentSpec
from agents.off_policy import OffPolicyBuilder
from agents.td3 import learning
from agents.td3.config import TD3Config
from agents.td3.networks import TD3Networks


class TD3Builder(OffPolicyBuilder):
    name = "TD3"

    def __init__(self, config: TD3Config = TD3Config()):
        super().__init__(config)

    def make_policy(self, *, networks: TD3Networks, environment_spec: EnvironmentSpec, evaluation: bool = False):
        sigma = 0.0 if evaluation else self.config.exploration_noise
        core = gaussian_noise_core(networks.policy.apply, networks.bounds, sigma)
        warmup = 0 if evaluation else self.config.random_warmup_steps
        return uniform_warmup_core(core, networks.bounds, warmup)

    def learning_parts(self, *, networks: TD3Networks, environment_spec: EnvironmentSpec, random_key) -> LearningParts:
        return LearningParts(
            state=learning.init_training_state(networks, self.config, random_key),
            update_step=learning.make_update_step(networks, self.config),
            loss_keys=learning.LOSS_KEYS,
            policy_params=lambda state: state.policy_params,
        )
