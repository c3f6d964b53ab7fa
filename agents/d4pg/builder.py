"""D4PGBuilder: D4PG through the one builder interface (n-step transition replay, optionally prioritized; see
agents/off_policy.py)."""

from acmelike.actors import gaussian_noise_core, uniform_warmup_core
from acmelike.learners import LearningParts
from acmelike.specs import EnvironmentSpec
from agents.d4pg import learning
from agents.d4pg.config import D4PGConfig
from agents.d4pg.networks import D4PGNetworks
from agents.off_policy import OffPolicyBuilder


class D4PGBuilder(OffPolicyBuilder):
    name = "D4PG"

    def __init__(self, config: D4PGConfig = D4PGConfig()):
        super().__init__(config)

    def make_policy(self, *, networks: D4PGNetworks, environment_spec: EnvironmentSpec, evaluation: bool = False):
        sigma = 0.0 if evaluation else self.config.exploration_noise
        core = gaussian_noise_core(networks.policy.apply, networks.bounds, sigma)
        warmup = 0 if evaluation else self.config.random_warmup_steps
        return uniform_warmup_core(core, networks.bounds, warmup)

    def learning_parts(self, *, networks: D4PGNetworks, environment_spec: EnvironmentSpec, random_key) -> LearningParts:
        return LearningParts(
            state=learning.init_training_state(networks, self.config, random_key),
            update_step=learning.make_update_step(networks, self.config),
            loss_keys=learning.LOSS_KEYS,
            policy_params=lambda state: state.policy_params,
        )
