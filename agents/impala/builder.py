"""IMPALABuilder: IMPALA through the one builder interface."""

from acmelike.actors import recurrent_categorical_core
from acmelike.actors.actor_core import ActorCore
from acmelike.builders import ActorLearnerBuilder
from acmelike.learners import LearningParts
from acmelike.specs import EnvironmentSpec
from agents.impala import learning
from agents.impala.config import IMPALAConfig
from agents.impala.networks import IMPALANetworks
from agents.on_policy import OnPolicyBuilder


class IMPALABuilder(OnPolicyBuilder, ActorLearnerBuilder[IMPALANetworks, ActorCore]):
    """Sequences of `unroll_length + 1` steps through a Reverb queue; each learner step consumes `batch_size`.

    Actors fetch parameters every `variable_update_period` steps (asynchronously in distributed programs) and act
    with slightly stale policies, which V-trace corrects for.
    """

    name = "IMPALA"

    def __init__(self, config: IMPALAConfig = IMPALAConfig()):
        super().__init__(config)

    def make_policy(self, *, networks: IMPALANetworks, environment_spec: EnvironmentSpec, evaluation: bool = False):
        return recurrent_categorical_core(networks.network, networks.num_actions, greedy=evaluation)

    def learning_parts(self, *, networks: IMPALANetworks, environment_spec: EnvironmentSpec,
                       random_key) -> LearningParts:
        return LearningParts(
            state=learning.init_training_state(networks, self.config, random_key),
            update_step=learning.make_update_step(networks, self.config),
            loss_keys=("loss",),
            policy_params=lambda state: state.params,
        )
