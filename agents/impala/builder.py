"""IMPALABuilder: IMPALA through the one builder interface."""

from typing import Iterator

from acmelike import core
from acmelike.actors import recurrent_categorical_core
from acmelike.actors.actor_core import ActorCore
from acmelike.builders import ActorLearnerBuilder
from acmelike.learners import SGDLearner
from acmelike.specs import EnvironmentSpec
from acmelike.types import ReplaySample
from agents.impala import learning
from agents.impala.config import IMPALAConfig
from agents.impala.networks import IMPALANetworks
from agents.on_policy import OnPolicyBuilder


class IMPALABuilder(OnPolicyBuilder, ActorLearnerBuilder[IMPALANetworks, ActorCore]):
    """Sequences of `unroll_length + 1` steps through a Reverb queue; each learner step consumes `batch_size`.

    Actors fetch parameters every `variable_update_period` steps (asynchronously in distributed programs) and act
    with slightly stale policies, which V-trace corrects for.
    """

    def __init__(self, config: IMPALAConfig = IMPALAConfig()):
        super().__init__(config)

    def make_policy(self, *, networks: IMPALANetworks, environment_spec: EnvironmentSpec, evaluation: bool = False):
        return recurrent_categorical_core(networks.network, networks.num_actions, greedy=evaluation)

    def make_learner(
        self,
        *,
        random_key,
        networks: IMPALANetworks,
        dataset: Iterator[ReplaySample],
        environment_spec: EnvironmentSpec,
        replay_client=None,
        counter=None,
        logger=None,
    ) -> core.Learner:
        return SGDLearner(
            state=learning.init_training_state(networks, self.config, random_key),
            update_step=learning.make_update_step(networks, self.config),
            iterator=dataset,
            variables={"policy": lambda state: state.params},
            counter=counter,
            logger=logger,
            name="IMPALA learner",
        )
