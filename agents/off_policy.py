"""What DQN, SAC, TD3 and D4PG share: n-step transition replay fed at a fixed samples-per-insert ratio, and a builder.

An `OffPolicyBuilder` subclass gives its policy and its learning step (`make_policy`, and `learning_parts` as
`acmelike.builders.OfflineBuilder` declares it); the replay table, dataset, adder, actor and the `SGDLearner`
around the learning step are built here, once.
"""

import functools
from typing import Any, Iterator, Mapping

import numpy as np

from acmelike import core
from acmelike.actors.actor_core import ActorCore
from acmelike.adders.base import Adder
from acmelike.builders import ActorLearnerBuilder, policy_extras_spec
from acmelike.specs import EnvironmentSpec
from acmelike.types import ReplaySample
from agents.config_parts import PrioritizedReplay


def write_priorities(replay_client, table: str, batch: ReplaySample, extras: Mapping[str, np.ndarray]) -> None:
    """A learner's `after_update` on prioritized replay: the sampled items' new priorities (`extras["priorities"]`,
    one per item of `batch`) to `table`. Bind the first two with functools.partial."""
    keys = np.asarray(batch.info.key).reshape(-1).tolist()
    priorities = np.asarray(extras["priorities"], dtype=np.float64).reshape(-1).tolist()
    replay_client.mutate_priorities(table, updates=dict(zip(keys, priorities)))


class OffPolicyBuilder(ActorLearnerBuilder[Any, ActorCore]):
    """A transition-replay builder; subclasses define `make_policy`, `learning_parts` and `name`.

    Replay is prioritized when `priority_exponent` > 0 (the learner then writes `extras["priorities"]` back),
    uniform otherwise. One learner step samples `batch_size * num_sgd_steps_per_step` items and makes
    `num_sgd_steps_per_step` SGD steps; the rate limiter holds sampled/inserted items near
    `samples_per_insert` (e.g. batch 256 at 256 samples per insert: one SGD step per environment step).
    """

    name: str = "agent"

    def __init__(self, config):
        self.config = config

    @property
    def priority_exponent(self) -> float:
        """Prioritized replay's exponent (alpha): items are sampled in proportion to priority ** alpha. The config's
        `priority_exponent` where it is composed of `agents.config_parts.PrioritizedReplay` (DQN, D4PG), else 0:
        uniform replay."""
        return self.config.priority_exponent if isinstance(self.config, PrioritizedReplay) else 0.0

    def _prioritized(self) -> bool:
        return self.priority_exponent > 0

    def make_replay_tables(self, *, environment_spec: EnvironmentSpec, policy: ActorCore) -> list:
        from acmelike import replay
        from acmelike.adders.transition import NStepTransitionAdder

        c = self.config
        limiter = replay.sample_to_insert_ratio(
            samples_per_insert=c.samples_per_insert,
            min_size_to_sample=c.min_replay_size,
            error_buffer=max(
                float(c.batch_size * c.num_sgd_steps_per_step),
                c.min_replay_size * c.samples_per_insert_tolerance_rate * c.samples_per_insert,
            ),
        )
        signature = NStepTransitionAdder.signature(environment_spec, policy_extras_spec(policy))
        if self._prioritized():
            return [replay.prioritized_table(name=c.replay_table_name, max_size=c.max_replay_size,
                                             priority_exponent=self.priority_exponent, rate_limiter=limiter,
                                             signature=signature)]
        return [replay.uniform_table(name=c.replay_table_name, max_size=c.max_replay_size, rate_limiter=limiter,
                                     signature=signature)]

    def make_dataset_iterator(self, *, replay_client) -> Iterator[ReplaySample]:
        from acmelike import replay

        return replay.make_dataset_iterator(
            client=replay_client,
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

    def make_learner(
        self,
        *,
        random_key,
        networks,
        dataset: Iterator[ReplaySample],
        environment_spec: EnvironmentSpec,
        replay_client=None,
        counter=None,
        logger=None,
    ) -> core.Learner:
        parts = self.learning_parts(networks=networks, environment_spec=environment_spec, random_key=random_key)
        prioritized = self._prioritized() and replay_client is not None
        return parts.make_learner(
            dataset,
            name=f"{self.name} learner",
            num_sgd_steps_per_step=self.config.num_sgd_steps_per_step,
            after_update=(functools.partial(write_priorities, replay_client, self.config.replay_table_name)
                          if prioritized else None),
            counter=counter,
            logger=logger,
        )
