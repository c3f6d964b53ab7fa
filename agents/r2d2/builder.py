"""R2D2Builder: R2D2 through the one builder interface."""

import functools
from typing import Iterator

from acmelike import core
from acmelike.actors import apex_epsilons, recurrent_epsilon_greedy_core
from acmelike.actors.actor_core import ActorCore
from acmelike.adders.base import Adder
from acmelike.builders import ActorLearnerBuilder, policy_extras_spec
from acmelike.learners import LearningParts
from acmelike.specs import EnvironmentSpec
from acmelike.types import ReplaySample
from agents.off_policy import write_priorities
from agents.r2d2 import learning
from agents.r2d2.config import R2D2Config
from agents.r2d2.networks import R2D2Networks


class R2D2Builder(ActorLearnerBuilder[R2D2Networks, ActorCore]):
    """Prioritized replay of overlapping sequences with their stored LSTM state; the learner writes sequence
    priorities back."""

    # The learning module (init_training_state, make_update_step) and the learner's name: a builder reusing this
    # replay with another sequence learner (MuZero) sets these two.
    learning = learning
    learner_name = "R2D2 learner"

    def __init__(self, config: R2D2Config = R2D2Config()):
        self.config = config

    def make_replay_tables(self, *, environment_spec: EnvironmentSpec, policy: ActorCore) -> list:
        from acmelike import replay
        from acmelike.adders.sequence import SequenceAdder

        c = self.config
        # The buffer must let the learner sample a whole batch even when the actors are as far ahead as inserts
        # may get (max_diff - min_diff = 2 * error_buffer >= batch + one insert's worth), or both sides wait forever.
        tolerance = c.min_replay_size * c.samples_per_insert_tolerance_rate * c.samples_per_insert
        limiter = replay.sample_to_insert_ratio(
            samples_per_insert=c.samples_per_insert,
            min_size_to_sample=c.min_replay_size,
            error_buffer=max(tolerance, c.batch_size + c.samples_per_insert),
        )
        return [
            replay.prioritized_table(
                name=c.replay_table_name,
                max_size=c.max_replay_size,
                priority_exponent=c.priority_exponent,
                rate_limiter=limiter,
                # Each step stores the LSTM state that chose its action; the learner starts from the first one.
                signature=SequenceAdder.signature(
                    environment_spec, policy_extras_spec(policy), sequence_length=c.sequence_length
                ),
            )
        ]

    def make_dataset_iterator(self, *, replay_client) -> Iterator[ReplaySample]:
        from acmelike import replay

        return replay.make_dataset_iterator(
            client=replay_client,
            table=self.config.replay_table_name,
            batch_size=self.config.batch_size,
        )

    def make_adder(self, *, replay_client, environment_spec: EnvironmentSpec, policy: ActorCore) -> Adder:
        from acmelike.adders.sequence import EndBehavior, SequenceAdder

        # CONTINUE: sequences run on into the next episode (the unroll resets at its start), so every stored step
        # is used and the learner can tell padding steps from real ones by the next step's start_of_episode.
        return SequenceAdder(
            client=replay_client,
            table_names=[self.config.replay_table_name],
            sequence_length=self.config.sequence_length,
            period=self.config.sequence_period,
            end_of_episode_behavior=EndBehavior.CONTINUE,
        )

    def make_policy(self, *, networks: R2D2Networks, environment_spec: EnvironmentSpec, evaluation: bool = False):
        c = self.config
        if evaluation:
            epsilons = [c.evaluation_epsilon]
        else:
            epsilons = apex_epsilons(c.num_epsilons, c.epsilon, c.epsilon_alpha)
        return recurrent_epsilon_greedy_core(networks.network, epsilons)

    def learning_parts(self, *, networks: R2D2Networks, environment_spec: EnvironmentSpec,
                       random_key) -> LearningParts:
        return LearningParts(
            state=self.learning.init_training_state(networks, self.config, random_key),
            update_step=self.learning.make_update_step(networks, self.config),
            loss_keys=("loss",),
            policy_params=lambda state: state.params,
        )

    def make_learner(
        self,
        *,
        random_key,
        networks: R2D2Networks,
        dataset: Iterator[ReplaySample],
        environment_spec: EnvironmentSpec,
        replay_client=None,
        counter=None,
        logger=None,
    ) -> core.Learner:
        parts = self.learning_parts(networks=networks, environment_spec=environment_spec, random_key=random_key)
        write = functools.partial(write_priorities, replay_client, self.config.replay_table_name)
        return parts.make_learner(dataset, name=self.learner_name, counter=counter, logger=logger,
                                  after_update=write if replay_client is not None else None)
