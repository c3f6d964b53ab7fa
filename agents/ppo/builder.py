"""PPOBuilder: PPO through the one builder interface."""

from typing import Iterator

from acmelike import core
from acmelike.actors import categorical_policy_core
from acmelike.actors.actor_core import ActorCore
from acmelike.adders.base import Adder
from acmelike.builders import ActorLearnerBuilder, policy_extras_spec
from acmelike.learners import SGDLearner
from acmelike.specs import EnvironmentSpec
from acmelike.types import ReplaySample
from agents.ppo import learning
from agents.ppo.config import PPOConfig
from agents.ppo.networks import PPONetworks

class PPOBuilder(ActorLearnerBuilder[PPONetworks, ActorCore]):
    """Sequences of `unroll_length + 1` steps through a Reverb queue; each learner step consumes `batch_size`."""

    def __init__(self, config: PPOConfig = PPOConfig()):
        self.config = config

    @property
    def _sequence_length(self) -> int:
        return self.config.unroll_length + 1

    def make_replay_tables(self, *, environment_spec: EnvironmentSpec, policy: ActorCore) -> list:
        from acmelike import replay
        from acmelike.adders.sequence import SequenceAdder

        return [
            replay.queue_table(
                name=self.config.replay_table_name,
                max_size=self.config.max_queue_size,
                # The policy's extras (log mu(a|s), for PPO's importance ratios) are stored beside each action.
                signature=SequenceAdder.signature(
                    environment_spec, policy_extras_spec(policy), sequence_length=self._sequence_length
                ),
            )
        ]

    def make_dataset_iterator(self, *, replay_client) -> Iterator[ReplaySample]:
        from acmelike import replay

        return replay.make_dataset_iterator(
            server_address=replay_client.server_address,
            table=self.config.replay_table_name,
            batch_size=self.config.batch_size,
            num_parallel_calls=1,
        )

    def make_adder(self, *, replay_client, environment_spec: EnvironmentSpec, policy: ActorCore) -> Adder:
        from acmelike.adders.sequence import EndBehavior, SequenceAdder

        return SequenceAdder(
            client=replay_client,
            table_names=[self.config.replay_table_name],
            sequence_length=self._sequence_length,
            period=self.config.unroll_length,
            end_of_episode_behavior=EndBehavior.CONTINUE,
        )

    def make_policy(self, *, networks: PPONetworks, environment_spec: EnvironmentSpec, evaluation: bool = False):
        return categorical_policy_core(networks.logits, greedy=evaluation)

    def make_learner(
        self,
        *,
        random_key,
        networks: PPONetworks,
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
            name="PPO learner",
        )
