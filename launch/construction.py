"""AgentParts: the one construction path every runner shares.

An agent's environment, spec, networks, policies, replay tables, adder, actors and learner, and every seed and
PRNG key they use, are derived here from an `ExperimentConfig`, so a single-process run, each node of a Launchpad
program and any other runner build the same things the same way:

    parts = AgentParts(config)                      # spec + networks (each process builds its own)
    tables = parts.replay_tables()
    learner = parts.learner(dataset=..., replay_client=client)
    actor = parts.actor(0, variable_source=learner, adder=parts.adder(client))
    evaluator = parts.evaluator_actor(variable_source=learner)

Seeds: the spec is read from an environment seeded `config.seed`; actor `i`'s environment is seeded
`config.seed + 1 + i` and the evaluator's `config.seed + 1_000_003`. PRNG keys are folded from `config.seed` by
role, so no two roles share a key stream: learner (stream 0), evaluator (1), actor `i` (2 + i). A single-process
run is actor 0.
"""

from typing import Any, Optional

import dm_env
import jax

from acmelike import core
from acmelike.adders.base import Adder
from acmelike.specs import EnvironmentSpec, make_environment_spec
from launch.experiment import ExperimentConfig

_LEARNER_STREAM, _EVALUATOR_STREAM, _FIRST_ACTOR_STREAM = 0, 1, 2
_EVALUATOR_SEED_OFFSET = 1_000_003


def actor_seed(config: ExperimentConfig, index: int) -> int:
    """Seed of actor `index`'s environment."""
    return config.seed + 1 + index


def evaluator_seed(config: ExperimentConfig) -> int:
    """Seed of the evaluator's environment, far from every actor's."""
    return config.seed + _EVALUATOR_SEED_OFFSET


def _key(config: ExperimentConfig, stream: int) -> jax.Array:
    return jax.random.fold_in(jax.random.PRNGKey(config.seed), stream)


def read_environment_spec(config: ExperimentConfig) -> EnvironmentSpec:
    """The environment spec, read from an environment built (then closed) for the purpose."""
    environment = config.environment_factory(config.seed)
    try:
        return make_environment_spec(environment)
    finally:
        close = getattr(environment, "close", None)
        if close is not None:
            close()


class AgentParts:
    """Builds one agent's parts from `config`; see the module docstring for seeds and keys.

    Args:
      config: the experiment.
      environment_spec: the spec, if the caller already has it (else read from a fresh environment).
    """

    def __init__(self, config: ExperimentConfig, environment_spec: Optional[EnvironmentSpec] = None):
        self.config = config
        self.builder = config.builder
        self.spec = environment_spec if environment_spec is not None else read_environment_spec(config)
        self.networks = config.network_factory(self.spec)  # raises ValueError when the spec does not fit

    # Environments.

    def actor_environment(self, index: int) -> dm_env.Environment:
        return self.config.environment_factory(actor_seed(self.config, index))

    def evaluator_environment(self) -> dm_env.Environment:
        return self.config.environment_factory(evaluator_seed(self.config))

    # The agent.

    def policy(self, *, evaluation: bool = False):
        return self.builder.make_policy(networks=self.networks, environment_spec=self.spec, evaluation=evaluation)

    def replay_tables(self) -> list:
        """The builder's tables. A single-threaded runner calls this inside `replay.inserts_never_block()`."""
        return self.builder.make_replay_tables(environment_spec=self.spec, policy=self.policy())

    def adder(self, replay_client: Any) -> Adder:
        return self.builder.make_adder(replay_client=replay_client, environment_spec=self.spec, policy=self.policy())

    def actor(self, index: int, *, variable_source: Optional[core.VariableSource], adder: Optional[Adder]) -> core.Actor:
        """Actor `index`, running the training policy."""
        return self.builder.make_actor(
            random_key=_key(self.config, _FIRST_ACTOR_STREAM + index),
            policy=self.policy(),
            environment_spec=self.spec,
            variable_source=variable_source,
            adder=adder,
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
        return self.builder.make_learner(
            random_key=_key(self.config, _LEARNER_STREAM),
            networks=self.networks,
            dataset=dataset,
            environment_spec=self.spec,
            replay_client=replay_client,
            counter=counter,
            logger=logger,
        )
