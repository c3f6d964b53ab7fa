"""Builders: what an agent implements, as in Acme. `OfflineBuilder` is the base; `ActorLearnerBuilder` adds acting.

An agent that learns from a fixed dataset (BC, CQL) implements the smaller interface, `OfflineBuilder`:

    policy = builder.make_policy(networks=networks, environment_spec=spec, evaluation=True)
    learner = builder.make_learner(random_key=k1, networks=networks, dataset=batches, environment_spec=spec)
    evaluator = builder.make_actor(random_key=k2, policy=policy, environment_spec=spec, variable_source=learner)

(its batches come from the experiment, `launch.experiments.config.OfflineExperimentConfig.dataset_factory`). An
agent that learns from its own actors implements `ActorLearnerBuilder`, which adds replay, a dataset read from
it and adders:

    policy = builder.make_policy(networks=networks, environment_spec=spec)
    tables = builder.make_replay_tables(environment_spec=spec, policy=policy)
    # ... a Reverb server holds `tables`; `client` talks to it ...
    dataset = builder.make_dataset_iterator(replay_client=client)
    learner = builder.make_learner(random_key=k1, networks=networks, dataset=dataset,
                                   environment_spec=spec, replay_client=client)
    adder = builder.make_adder(replay_client=client, environment_spec=spec, policy=policy)
    actor = builder.make_actor(random_key=k2, policy=policy, environment_spec=spec,
                               variable_source=learner, adder=adder)

(`launch.experiments.parts.AgentParts` does exactly this, once, for every runner.)

Every method takes keyword arguments only, so call sites read as what they pass. The builder never creates a
Reverb server or a Launchpad node, and never asks how it is run: whether inserts may block is the runner's choice
(`acmelike.replay.never_blocking_inserts`, applied by the runner to the builder's tables), and how much one learner step samples is read off the dataset iterator.
That is why one builder serves every runner.

Tables and adders receive the policy, so what they store beside each action is derived from it
(`policy_extras_spec`) rather than kept in sync by hand.
"""

import abc
import copy
import dataclasses
from typing import Any, Callable, Generic, Iterator, Mapping, Optional, TypeVar

from acmelike import core
from acmelike.actors import make_policy_actor
from acmelike.adders.base import Adder
from acmelike.datasets import DatasetIterator
from acmelike.learners import LearningParts
from acmelike.specs import EnvironmentSpec
from acmelike.types import NestedSpec, PRNGKey, ReplaySample

Networks = TypeVar("Networks")
Policy = TypeVar("Policy")


class OfflineBuilder(abc.ABC, Generic[Networks, Policy]):
    """Builds the learner and the policies of an agent that learns from a fixed dataset, and its evaluation actor.

    `config` is the agent's frozen config dataclass: the one owner of its hyperparameters, network sizes included.
    """

    config: Any
    # Batches a learner's prefetch thread keeps ready. Sampled data waits there; an agent whose data must stay
    # fresh (a queue of on-policy sequences, where every waiting batch is acted with older parameters) keeps 1.
    learner_prefetch_batches: int = 2

    @abc.abstractmethod
    def make_learner(
        self,
        *,
        random_key: PRNGKey,
        networks: Networks,
        dataset: Iterator[ReplaySample],
        environment_spec: EnvironmentSpec,
        counter: Any = None,
        logger: Any = None,
    ) -> core.Learner:
        """Returns the learner, stepping on the batches of `dataset`."""

    @abc.abstractmethod
    def make_policy(self, *, networks: Networks, environment_spec: EnvironmentSpec, evaluation: bool = False) -> Policy:
        """Returns the policy (an `ActorCore`) actors run; `evaluation` asks for the greedy/evaluation policy."""

    def learning_parts(self, *, networks: Networks, environment_spec: EnvironmentSpec,
                       random_key: PRNGKey) -> LearningParts:
        """Returns the agent's learning step as data (`acmelike.learners.LearningParts`): the initial
        `TrainingState` drawn from `random_key`, the pure `update_step(state, batch) -> (state, metrics, extras)`,
        the losses that must stay finite, and where the policy's parameters are in the state.

        The learners of the off-policy, on-policy and offline agents are the generic `SGDLearner` on these parts
        (`LearningParts.make_learner`, called by their `make_learner`), and the fully jitted forms
        (`acmelike.anakin`) run the same `update_step` inside their own loop. A builder whose `make_learner` builds
        another kind of learner (independent learners: one per policy) need not give it.
        """
        raise NotImplementedError(
            f"{type(self).__name__} gives no learning_parts: its make_learner builds its learner without one. "
            f"Define learning_parts (see acmelike.builders.OfflineBuilder.learning_parts) to run its update step "
            f"elsewhere."
        )

    def make_actor(
        self,
        *,
        random_key: PRNGKey,
        policy: Policy,
        environment_spec: EnvironmentSpec,
        variable_source: Optional[core.VariableSource] = None,
        num_envs: Optional[int] = None,
    ) -> core.Actor:
        """Returns an actor running `policy` on parameters from `variable_source`, writing nowhere: the evaluator.

        A `GenericActor` that fetches the variable "policy" at every step, so each evaluation runs the learner's
        latest parameters. `num_envs`: as for `ActorLearnerBuilder.make_actor`.
        """
        return make_policy_actor(
            policy, random_key=random_key, variable_source=variable_source, adder=None, variable_update_period=1,
            num_envs=num_envs,
        )


class ActorLearnerBuilder(OfflineBuilder[Networks, Policy]):
    """An `OfflineBuilder` that also builds the replay tables, the dataset read from them, the adder and the
    actors that write to them: an agent that learns from its own experience."""

    @abc.abstractmethod
    def make_replay_tables(self, *, environment_spec: EnvironmentSpec, policy: Policy) -> list:
        """Returns the tables the agent's adder writes to and its dataset reads from, as descriptions
        (`acmelike.replay.TableSpec`, from `acmelike.replay`'s factories): the local replay is built from them, and a
        runner with a Reverb server makes its `reverb.Table`s from them.

        Signatures come from `environment_spec` and the policy's extras (`policy_extras_spec(policy)`).
        """

    @abc.abstractmethod
    def make_dataset_iterator(self, *, replay_client: Any) -> DatasetIterator[ReplaySample]:
        """Returns the learner's batches (`ReplaySample`s), as a `DatasetIterator`: it says which tables one `next()`
        samples and how many items it takes, and whether `next()` would wait, which is what runners rely on.

        Use `acmelike.replay.make_dataset_iterator`, which returns one.
        """

    @abc.abstractmethod
    def make_adder(self, *, replay_client: Any, environment_spec: EnvironmentSpec, policy: Policy) -> Adder:
        """Returns the adder an actor running `policy` writes its experience with."""

    @property
    def batch_size(self) -> int:
        """Items (transitions, sequences) in one learner batch: `config.batch_size`. Batched acting (`--num-envs`
        B) reads it, to sample ceil(batch_size / B) groups of B items instead (`with_batch_size`); override both
        where the config names its batch otherwise."""
        return self.config.batch_size

    def with_batch_size(self, batch_size: int) -> "ActorLearnerBuilder[Networks, Policy]":
        """This builder with learner batches of `batch_size` items: a copy whose config has `batch_size`
        replaced."""
        builder = copy.copy(self)
        builder.config = dataclasses.replace(self.config, batch_size=batch_size)
        return builder

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

    def make_actor(
        self,
        *,
        random_key: PRNGKey,
        policy: Policy,
        environment_spec: EnvironmentSpec,
        variable_source: Optional[core.VariableSource] = None,
        adder: Optional[Adder] = None,
        num_envs: Optional[int] = None,
    ) -> core.Actor:
        """Returns an actor running `policy`, with parameters from `variable_source`, writing to `adder`.

        `num_envs`: the actor steps B sub-environments together, its values (observations, actions, timesteps)
        batched [B, ...] and its adder a `BatchedAdder`; None: one environment, values without a batch axis. This
        is the way every runner builds its actors, batched or not.

        By default a `GenericActor` (acting always batched; one environment is a batch of one) that fetches the
        variable "policy" every `config.variable_update_period` environment steps (asynchronously from a source
        in another process); override it for any other kind of actor.
        """
        return make_policy_actor(
            policy,
            random_key=random_key,
            variable_source=variable_source,
            adder=adder,
            variable_update_period=self.config.variable_update_period,
            num_envs=num_envs,
        )


def policy_extras_spec(policy) -> NestedSpec:
    """The extras an `ActorCore` hands its adder, as a pytree of `dm_env.specs.Array`, computed without running it.

    `jax.eval_shape` traces `get_extras(on_episode_start(init(key)))`, so a core that adds a field to its extras
    changes the replay signature with it, and nothing needs params or a device.
    """
    import jax
    import numpy as np
    from dm_env import specs

    def extras(key):
        return policy.get_extras(policy.on_episode_start(policy.init(key)))

    shapes = jax.eval_shape(extras, jax.random.PRNGKey(0))
    return jax.tree_util.tree_map(lambda s: specs.Array(s.shape, np.dtype(s.dtype)), shapes)


@dataclasses.dataclass(frozen=True)
class AgentDefinition:
    """An agent as data: what a registry needs to build, configure, test and describe it.

    Attributes:
      name: the command-line name (`--agent NAME`).
      config_class: the agent's frozen config dataclass (every field settable with `--config field=value`).
      make_builder: config -> the agent's builder: an `ActorLearnerBuilder`, or for an `offline` agent an
        `OfflineBuilder` (learner, policies and evaluation actor only; its batches come from the experiment's
        `dataset_factory`).
      make_networks: (environment_spec, config) -> networks; raises ValueError naming the agent and the spec
        when the spec does not fit. Network sizes come from the config.
      action_space: "discrete" or "continuous", what `make_networks` accepts (used to suggest agents and
        environments that fit each other, and to pick the smoke test's fake environment); for a `multiagent`
        agent, each agent's actions.
      smoke_config: config overrides under which the agent learns within a couple of hundred steps of a fake
        environment (small replay minimums, short unrolls). The registry's smoke tests use them.
      offline: the agent learns from a fixed dataset (`--dataset`), never from its own actors.
      anakin: (jax_environment, config) -> the agent's fully jitted form (`acmelike.anakin.agent.AnakinAgent`),
        defined in the agent's own folder (`agents/<name>/anakin.py`); None: the agent has none.
      multiagent: the agent acts for several agents: its environment's specs are dicts keyed by agent id
        (`acmelike.wrappers.pettingzoo_adapter`), and single-agent environments do not fit it (nor it them).
      central_inference: an inference node can serve the agent's policy for every actor (`--inference central`);
        False where an actor is not one policy (independent learners: one single-agent actor per agent, each
        starting and ending its own episodes).
    """

    name: str
    config_class: type
    make_builder: Callable[[Any], OfflineBuilder]
    make_networks: Callable[[EnvironmentSpec, Any], Any]
    action_space: str
    smoke_config: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    offline: bool = False
    anakin: Optional[Callable[[Any, Any], Any]] = None
    multiagent: bool = False
    central_inference: bool = True

    def __post_init__(self):
        if self.action_space not in ("discrete", "continuous"):
            raise ValueError(f"AgentDefinition {self.name!r}: action_space must be 'discrete' or 'continuous'.")
