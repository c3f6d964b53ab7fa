"""AgentParts: the one construction path every runner shares.

An agent's environment, spec, networks, policies, replay tables, adder, actors and learner, and every seed and
PRNG key they use, are derived here from an `ExperimentConfig`, so a single-process run, each node of a Launchpad
program and any other runner build the same things the same way:

    parts = AgentParts(config)                      # spec + networks (each process builds its own)
    tables = parts.replay_tables(inserts_may_block=False)  # one thread: see replay.never_blocking_inserts
    learner = parts.learner(dataset=..., replay_client=client)
    actor = parts.actor(0, variable_source=learner, adder=parts.adder(client))
    evaluator = parts.evaluator_actor(variable_source=learner)

Seeds: the spec is read from an environment seeded `config.seed`; actor `i`'s environment is seeded
`config.seed + 1 + i` and the evaluator's `config.seed + 1_000_003`. PRNG keys are folded from `config.seed` by
role, so no two roles share a key stream: learner (stream 0), evaluator (1), actor `i` (2 + i). A single-process
run is actor 0.

Offline runs build theirs from an `OfflineExperimentConfig`: spec, networks, policies, the evaluator's environment
and actor, and the learner (on the config's dataset; no replay client). There are no actors, tables or adders.

Batched acting (`config.num_envs` = B > 1): actor `i` steps B environments together (sub-environment j seeded
`actor_seed(config, i) + j`, actor seeds B apart), with the builder's `make_actor` for `num_envs` B (one jitted
policy call per vector step) and a `BatchedAdder` writing groups of B items; tables store the
groups (`batched_tables`) and `dataset` serves the learner single items again (`UnbatchedIterator`). The evaluator
acts in one environment. Either way the actor is the builder's, acting as a batch (of one, for one environment).

Action repeat (`config.action_repeat` = K > 1): every environment built here, the actors' and the evaluator's, is
an `ActionRepeatWrapper` of K; batched, a `BatchedEnvironments` of them (a vector environment cannot repeat its
sub-environments' actions one by one). The spec is the environment's own: repeating changes no shape.
"""

import math
from typing import Any, Optional, Union

import dm_env
import jax

from acmelike import core
from acmelike.actors.inference import InferenceClientActor, InferenceServer
from acmelike.adders.base import Adder
from acmelike.adders.batched import BatchedAdder, UnbatchedIterator, batched_tables
from acmelike.replay import Prefetcher, never_blocking_inserts
from acmelike.specs import EnvironmentSpec, make_environment_spec
from acmelike.variables import VariableClient
from acmelike.wrappers import BatchedEnvironments, repeat_actions
from launch.experiments.config import ExperimentConfig, OfflineExperimentConfig

_LEARNER_STREAM, _EVALUATOR_STREAM, _FIRST_ACTOR_STREAM = 0, 1, 2
_EVALUATOR_SEED_OFFSET = 1_000_003


def actor_seed(config: ExperimentConfig, index: int) -> int:
    """Seed of actor `index`'s environment (of its first sub-environment when it steps `num_envs`)."""
    return config.seed + 1 + index * config.num_envs


def evaluator_seed(config: Union[ExperimentConfig, OfflineExperimentConfig]) -> int:
    """Seed of the evaluator's environment, far from every actor's."""
    return config.seed + _EVALUATOR_SEED_OFFSET


def _key(config: Union[ExperimentConfig, OfflineExperimentConfig], stream: int) -> jax.Array:
    return jax.random.fold_in(jax.random.PRNGKey(config.seed), stream)


def read_environment_spec(config: Union[ExperimentConfig, OfflineExperimentConfig]) -> EnvironmentSpec:
    """The environment spec, read from an environment built (then closed) for the purpose."""
    environment = config.environment_factory(config.seed)
    try:
        return make_environment_spec(environment)
    finally:
        environment.close()  # a dm_env.Environment's, a no-op unless the environment holds resources


class AgentParts:
    """Builds one agent's parts from `config`; see the module docstring for seeds and keys.

    Args:
      config: the experiment (an offline one builds no actors, tables or adders).
      environment_spec: the spec, if the caller already has it (else read from a fresh environment).
    """

    def __init__(
        self,
        config: Union[ExperimentConfig, OfflineExperimentConfig],
        environment_spec: Optional[EnvironmentSpec] = None,
    ):
        self.config = config
        self.builder = config.builder
        self.spec = environment_spec if environment_spec is not None else read_environment_spec(config)
        self.networks = config.network_factory(self.spec)  # raises ValueError when the spec does not fit
        # Batched environments, adders, tables, datasets and actors; an offline run acts in none.
        self.batched = isinstance(config, ExperimentConfig) and config.num_envs > 1
        # What actors are built for: B sub-environments' batched values, or (None) one environment's.
        self.num_envs: Optional[int] = config.num_envs if self.batched else None

    # Environments.

    def actor_environment(self, index: int) -> dm_env.Environment:
        """Actor `index`'s environment; with `num_envs` > 1 a batched one (see the module docstring)."""
        config, seed = self.config, actor_seed(self.config, index)
        if not self.batched:
            return self._environment(seed)
        # A vector environment steps its sub-environments as one and cannot repeat their actions one by one.
        if config.vector_environment_factory is not None and config.action_repeat == 1:
            return config.vector_environment_factory(num_envs=config.num_envs, seed=seed)
        return BatchedEnvironments([self._environment(seed + j) for j in range(config.num_envs)])

    def evaluator_environment(self) -> dm_env.Environment:
        return self._environment(evaluator_seed(self.config))

    def _environment(self, seed: int) -> dm_env.Environment:
        """One environment seeded `seed`, its actions repeated `config.action_repeat` times."""
        return repeat_actions(self.config.environment_factory(seed), self.config.action_repeat)

    # The agent.

    def policy(self, *, evaluation: bool = False):
        return self.builder.make_policy(networks=self.networks, environment_spec=self.spec, evaluation=evaluation)

    def replay_tables(self, *, inserts_may_block: bool) -> list:
        """The builder's table descriptions (`acmelike.replay.TableSpec`s). A runner that acts and learns in one
        thread passes `inserts_may_block=False`: the tables go through `replay.never_blocking_inserts`."""
        tables = self.builder.make_replay_tables(environment_spec=self.spec, policy=self.policy())
        if not inserts_may_block:
            tables = never_blocking_inserts(tables)
        if not self.batched:
            return tables

        return batched_tables(tables, self.config.num_envs)

    def dataset(self, replay_client: Any):
        """The learner's dataset iterator: the builder's; batched, it samples groups of B items (the builder
        `with_batch_size` ceil(batch_size / B)) served as the builder's batches of single items."""
        builder, num_envs = self.builder, self.config.num_envs
        if not self.batched:
            return builder.make_dataset_iterator(replay_client=replay_client)

        batch_size = builder.batch_size
        groups = math.ceil(batch_size / num_envs)
        dataset = builder.with_batch_size(groups).make_dataset_iterator(replay_client=replay_client)
        # One next() may hold several learner batches (e.g. DQN's batch_size x num_sgd_steps_per_step).
        per_next = sum(dataset.samples_per_next.values())
        if per_next % groups:
            raise ValueError(
                f"--num-envs {num_envs}: the agent's dataset samples {per_next} items per next() for batch_size "
                f"{groups}, not a multiple of it; batched acting needs items per next() proportional to batch_size."
            )
        return UnbatchedIterator(dataset, num_envs, per_next // groups * batch_size)

    def prefetched_dataset(self, replay_client: Any):
        """`dataset` behind a `Prefetcher` keeping the builder's `learner_prefetch_batches` ready."""
        return Prefetcher(self.dataset(replay_client), buffer_size=self.builder.learner_prefetch_batches)

    def adder(self, replay_client: Any) -> Adder:
        policy = self.policy()
        if not self.batched:
            return self.builder.make_adder(replay_client=replay_client, environment_spec=self.spec, policy=policy)

        return BatchedAdder(
            client=replay_client,
            num_envs=self.config.num_envs,
            make_adder=lambda client: self.builder.make_adder(
                replay_client=client, environment_spec=self.spec, policy=policy
            ),
        )

    def actor(self, index: int, *, variable_source: Optional[core.VariableSource], adder: Optional[Adder]) -> core.Actor:
        """Actor `index`, running the training policy: the builder's `make_actor`, for `num_envs` environments."""
        return self.builder.make_actor(
            random_key=_key(self.config, _FIRST_ACTOR_STREAM + index),
            policy=self.policy(),
            environment_spec=self.spec,
            variable_source=variable_source,
            adder=adder,
            num_envs=self.num_envs,
        )

    def evaluator_actor(self, *, variable_source: Optional[core.VariableSource]) -> core.Actor:
        """The evaluation policy's actor; it writes nowhere."""
        return self.builder.make_actor(
            random_key=_key(self.config, _EVALUATOR_STREAM),
            policy=self.policy(evaluation=True),
            environment_spec=self.spec,
            variable_source=variable_source,
        )

    def learner(self, *, dataset, replay_client: Any = None, counter: Any = None, logger: Any = None) -> core.Learner:
        """The learner on `dataset`; `replay_client` only for an `ActorLearnerBuilder` (an offline one has none)."""
        replay = {} if replay_client is None else {"replay_client": replay_client}
        return self.builder.make_learner(
            random_key=_key(self.config, _LEARNER_STREAM),
            networks=self.networks,
            dataset=dataset,
            environment_spec=self.spec,
            counter=counter,
            logger=logger,
            **replay,
        )

    def inference_client_actor(self, index: int, *, server: Any, adder: Optional[Adder]) -> core.Actor:
        """Actor `index` under central inference: its policy runs on `server` (an `InferenceServer`, or a handle
        to an inference node), with the key `actor(index)` would use, so it chooses the same actions."""
        key = _key(self.config, _FIRST_ACTOR_STREAM + index)
        return InferenceClientActor(server, index, key, self.num_envs, adder=adder)

    def inference_server(self, *, variable_source: Optional[core.VariableSource], max_batch_size: int):
        """The central inference server of the training policy, with parameters from `variable_source`: it
        fetches them as often, in each actor's steps, as a local actor would (a batch holds one vector step of
        each actor)."""
        client = None
        if variable_source is not None:
            period = self.builder.config.variable_update_period  # as every builder's make_actor reads it
            client = VariableClient(variable_source, "policy", update_period=max(1, period // self.config.num_envs))
        return InferenceServer(
            self.policy(), client, max_batch_size=max_batch_size, timeout_s=self.config.inference_timeout_s
        )
