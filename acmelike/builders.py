"""ActorLearnerBuilder: the one interface every agent implements.

A runner (single process or distributed) builds an agent from a builder like this:

    tables = builder.make_replay_tables(environment_spec=spec, insert_may_block=...)
    # ... a Reverb server holds `tables`; `client` talks to it ...
    dataset = builder.make_dataset_iterator(replay_client=client)
    learner = builder.make_learner(random_key=k1, networks=networks, dataset=dataset,
                                   environment_spec=spec, replay_client=client)
    policy = builder.make_policy(networks=networks, environment_spec=spec)
    adder = builder.make_adder(replay_client=client, environment_spec=spec)
    actor = builder.make_actor(random_key=k2, policy=policy, environment_spec=spec,
                               variable_source=learner, adder=adder)

Every method takes keyword arguments only, so call sites read as what they pass. The builder never creates a
Reverb server or a Launchpad node: those belong to the runner, which is why one builder serves both.
"""

import abc
from typing import Any, Generic, Iterator, Optional, TypeVar

from acmelike import core
from acmelike.adders.base import Adder
from acmelike.specs import EnvironmentSpec
from acmelike.types import PRNGKey, ReplaySample

Networks = TypeVar("Networks")
Policy = TypeVar("Policy")


class ActorLearnerBuilder(abc.ABC, Generic[Networks, Policy]):
    """Builds the replay tables, dataset, adder, actor, learner and policy of one agent."""

    @abc.abstractmethod
    def make_replay_tables(self, *, environment_spec: EnvironmentSpec, insert_may_block: bool) -> list:
        """Returns the `reverb.Table`s the agent's adder writes to and its dataset reads from.

        Args:
          environment_spec: the environment's specs, for the tables' signatures.
          insert_may_block: whether the tables' rate limiters may make an insert wait. A single-process runner
            passes False: actor and learner share one thread, so a blocked insert would wait on itself. Sampling
            may always block; runners step the learner only when its tables can serve a batch.
        """

    @abc.abstractmethod
    def make_dataset_iterator(self, *, replay_client: Any) -> Iterator[ReplaySample]:
        """Returns an iterator of batches (`ReplaySample`) for the learner."""

    @abc.abstractmethod
    def make_adder(self, *, replay_client: Any, environment_spec: EnvironmentSpec) -> Adder:
        """Returns the adder an actor writes its experience with."""

    @abc.abstractmethod
    def make_actor(
        self,
        *,
        random_key: PRNGKey,
        policy: Policy,
        environment_spec: EnvironmentSpec,
        variable_source: Optional[core.VariableSource] = None,
        adder: Optional[Adder] = None,
    ) -> core.Actor:
        """Returns an actor running `policy`, with parameters from `variable_source`, writing to `adder`."""

    @abc.abstractmethod
    def make_learner(
        self,
        *,
        random_key: PRNGKey,
        networks: Networks,
        dataset: Iterator[ReplaySample],
        environment_spec: EnvironmentSpec,
        replay_client: Any = None,
        counter: Any = None,
        logger: Any = None,
    ) -> core.Learner:
        """Returns the learner; `replay_client` lets it update priorities."""

    @abc.abstractmethod
    def make_policy(self, *, networks: Networks, environment_spec: EnvironmentSpec, evaluation: bool = False) -> Policy:
        """Returns the policy (an `ActorCore`) actors run; `evaluation` asks for the greedy/evaluation policy."""

    @abc.abstractmethod
    def batch_size_per_learner_step(self) -> dict:
        """Items one `learner.step()` samples from each table, {table name: count}.

        The single-process runner steps the learner only while every table `can_sample` this many items.
        """
