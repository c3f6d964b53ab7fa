"""OfflineBuilder: what every offline agent's builder shares: data from a Minari dataset, no replay, no adders."""

import abc
from typing import Iterator, Optional

from acmelike import core
from acmelike.actors import make_policy_actor
from acmelike.adders.base import Adder
from acmelike.builders import ActorLearnerBuilder
from acmelike.learners import LearningParts
from acmelike.specs import EnvironmentSpec
from acmelike.types import ReplaySample


class OfflineBuilder(ActorLearnerBuilder):
    """An `ActorLearnerBuilder` whose learner reads `config.dataset_id` (a local Minari dataset) and whose actors
    only evaluate. Subclasses give `make_policy`, `learning_parts` and `name`; `config` has dataset_id, batch_size,
    num_sgd_steps_per_step and discount."""

    name: str  # e.g. "CQL": names the learner in logs and errors

    def __init__(self, config):
        self.config = config

    def make_replay_tables(self, *, environment_spec: EnvironmentSpec, policy) -> list:
        return []  # the dataset is the replay

    def make_dataset_iterator(self, *, replay_client=None, seed: int = 0) -> Iterator[ReplaySample]:
        from acmelike.offline import MinariIterator

        c = self.config
        if not c.dataset_id:
            raise ValueError(f"{type(self).__name__}: name the Minari dataset to learn from (--dataset ID).")
        return MinariIterator(c.dataset_id, batch_size=c.batch_size * c.num_sgd_steps_per_step, discount=c.discount,
                              seed=seed)

    def make_adder(self, *, replay_client, environment_spec: EnvironmentSpec, policy) -> Adder:
        raise NotImplementedError(f"{type(self).__name__} learns from a fixed dataset: no actor writes to replay.")

    def make_actor(self, *, random_key, policy, environment_spec: EnvironmentSpec,
                   variable_source: Optional[core.VariableSource] = None, adder: Optional[Adder] = None) -> core.Actor:
        return make_policy_actor(policy, random_key=random_key, variable_source=variable_source, adder=None,
                                 variable_update_period=1)

    @abc.abstractmethod
    def learning_parts(self, *, networks, environment_spec: EnvironmentSpec, random_key) -> LearningParts:
        """The initial training state, the pure update step, its losses and where the policy parameters are."""

    def make_learner(self, *, random_key, networks, dataset: Iterator[ReplaySample], environment_spec: EnvironmentSpec,
                     replay_client=None, counter=None, logger=None) -> core.Learner:
        parts = self.learning_parts(networks=networks, environment_spec=environment_spec, random_key=random_key)
        return parts.make_learner(dataset, name=f"{self.name} learner",
                                  num_sgd_steps_per_step=self.config.num_sgd_steps_per_step, counter=counter,
                                  logger=logger)
