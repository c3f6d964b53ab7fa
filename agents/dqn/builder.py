"""DQNBuilder: DQN through the one builder interface."""

from typing import Iterator

import numpy as np
import optax

from acmelike import core
from acmelike.actors import epsilon_greedy_core
from acmelike.actors.actor_core import ActorCore
from acmelike.adders.base import Adder
from acmelike.builders import ActorLearnerBuilder, policy_extras_spec
from acmelike.learners import SGDLearner
from acmelike.specs import EnvironmentSpec
from acmelike.types import ReplaySample
from agents.dqn import learning
from agents.dqn.config import DQNConfig
from agents.dqn.networks import DQNNetworks


class DQNBuilder(ActorLearnerBuilder[DQNNetworks, ActorCore]):
    """Prioritized n-step replay; the learner writes |TD| errors back as priorities."""

    def __init__(self, config: DQNConfig = DQNConfig()):
        self.config = config

    def make_replay_tables(self, *, environment_spec: EnvironmentSpec, policy: ActorCore) -> list:
        from acmelike import replay
        from acmelike.adders.transition import NStepTransitionAdder

        c = self.config
        limiter = replay.sample_to_insert_ratio(
            samples_per_insert=c.samples_per_insert,
            min_size_to_sample=c.min_replay_size,
            error_buffer=max(1.0, c.min_replay_size * c.samples_per_insert_tolerance_rate * c.samples_per_insert),
        )
        return [
            replay.prioritized_table(
                name=c.replay_table_name,
                max_size=c.max_replay_size,
                priority_exponent=c.priority_exponent,
                rate_limiter=limiter,
                signature=NStepTransitionAdder.signature(environment_spec, policy_extras_spec(policy)),
            )
        ]

    def make_dataset_iterator(self, *, replay_client) -> Iterator[ReplaySample]:
        from acmelike import replay

        return replay.make_dataset_iterator(
            server_address=replay_client.server_address,
            table=self.config.replay_table_name,
            batch_size=self.config.batch_size * self.config.num_sgd_steps_per_step,
        )

    def make_adder(self, *, replay_client, environment_spec: EnvironmentSpec, policy: ActorCore) -> Adder:
        from acmelike.adders.transition import NStepTransitionAdder

        return NStepTransitionAdder(
            client=replay_client,
            table_names=[self.config.replay_table_name],
            n_step=self.config.n_step,
            discount=self.config.discount,
        )

    def make_policy(self, *, networks: DQNNetworks, environment_spec: EnvironmentSpec, evaluation: bool = False):
        c = self.config
        if evaluation:
            schedule = lambda steps: c.evaluation_epsilon  # noqa: E731
        else:
            schedule = optax.linear_schedule(c.epsilon_init, c.epsilon_final, c.epsilon_decay_steps)
        return epsilon_greedy_core(networks.q_network.apply, schedule)

    def make_learner(
        self,
        *,
        random_key,
        networks: DQNNetworks,
        dataset: Iterator[ReplaySample],
        environment_spec: EnvironmentSpec,
        replay_client=None,
        counter=None,
        logger=None,
    ) -> core.Learner:
        table = self.config.replay_table_name

        def update_priorities(batch: ReplaySample, extras) -> None:
            keys = np.asarray(batch.info.key).reshape(-1).tolist()
            priorities = np.asarray(extras["priorities"], dtype=np.float64).reshape(-1).tolist()
            replay_client.mutate_priorities(table, updates=dict(zip(keys, priorities)))

        return SGDLearner(
            state=learning.init_training_state(networks, self.config, random_key),
            update_step=learning.make_update_step(networks, self.config),
            iterator=dataset,
            variables={"policy": lambda state: state.params},
            num_sgd_steps_per_step=self.config.num_sgd_steps_per_step,
            after_update=update_priorities if replay_client is not None else None,
            counter=counter,
            logger=logger,
            name="DQN learner",
        )
