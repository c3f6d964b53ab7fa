"""What PPO and IMPALA share: sequences of `unroll_length + 1` steps through a Reverb queue, each sampled once.

An `OnPolicyBuilder` subclass gives its policy and its learning step (`make_policy`, `learning_parts` as
`acmelike.builders.OfflineBuilder` declares it, and `name`); the queue, the dataset, the CONTINUE sequence adder
and the `SGDLearner` are built here, once. Its config needs `unroll_length`, `batch_size`, `max_queue_size`,
`replay_table_name` and `variable_update_period`.
"""

from typing import Any, Iterator

from acmelike import core
from acmelike.actors.actor_core import ActorCore
from acmelike.adders.base import Adder
from acmelike.builders import ActorLearnerBuilder, policy_extras_spec
from acmelike.specs import EnvironmentSpec
from acmelike.types import ReplaySample


class OnPolicyBuilder(ActorLearnerBuilder):
    """Sequences of `unroll_length + 1` steps (the last only bootstraps) written every `unroll_length` steps, across
    episode boundaries; each learner step consumes `batch_size` of them."""

    name: str = "agent"
    learner_prefetch_batches = 1  # see make_dataset_iterator

    def __init__(self, config: Any):
        self.config = config

    def make_learner(self, *, random_key, networks, dataset: Iterator[ReplaySample], environment_spec: EnvironmentSpec,
                     replay_client=None, counter=None, logger=None) -> core.Learner:
        parts = self.learning_parts(networks=networks, environment_spec=environment_spec, random_key=random_key)
        return parts.make_learner(dataset, name=f"{self.name} learner", counter=counter, logger=logger)

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
                # The policy's extras (e.g. PPO's log mu(a|s), IMPALA's behaviour logits and LSTM state) are stored
                # beside each action.
                signature=SequenceAdder.signature(
                    environment_spec, policy_extras_spec(policy), sequence_length=self._sequence_length
                ),
            )
        ]

    def make_dataset_iterator(self, *, replay_client) -> Iterator[ReplaySample]:
        from acmelike import replay

        return replay.make_dataset_iterator(
            client=replay_client,
            table=self.config.replay_table_name,
            batch_size=self.config.batch_size,
            # Everything sampled ahead of the learner was acted with older parameters. When actors outpace the
            # learner (a distributed program) every buffer stays full, so keep the pipeline to one batch: the
            # queue itself (`max_queue_size`) is then the main lag. Measured on MinAtar Breakout (local_mt, 2
            # actors x 4 environments, batch 8): Reverb's default pipeline kept ~10 learner steps of data ahead of
            # the learner, and KL(mu || pi) reached 0.3-1.6 where the single process had 0.001-0.006.
            num_parallel_calls=1,
            max_in_flight_samples_per_worker=self.config.batch_size,
            prefetch_batches=1,
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
