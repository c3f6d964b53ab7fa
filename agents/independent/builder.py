"""DecentralisedBuilder: independent learners as a builder of builders (Acme's decentralised multi-agent builder).

Each policy (`policy_mapping`; by default one per agent) is a single-agent agent built by its own, unchanged
builder on the single-agent spec of its agents: its networks, replay tables, dataset, learner and policy. The
pieces are put together behind the one builder interface, so the runners never learn that there are several:

    networks        {policy: the single agent's networks}
    policy          {policy: the single agent's policy}
    tables          every policy's tables (named `<replay_table_name>_<policy>`)
    dataset         one next() = {policy: one next() of its dataset}
    learner         one step = one step of every policy's learner; serves "policy" = {policy: its parameters}
    adder, actor    one single-agent adder and actor per *agent* (an agent is its own episode stream): the actor
                    splits each multi-agent timestep into per-agent timesteps

An agent that leaves mid-episode ends its own episode there (its last timestep, with its own discount); it is
neither stepped nor written after that. An agent that appears later starts its episode then.
"""

import dataclasses
from typing import Any, Dict, Iterator, Mapping, Optional

import dm_env
import jax
import numpy as np

from acmelike import core
from acmelike.adders.base import Adder
from acmelike.builders import ActorLearnerBuilder, AgentDefinition
from acmelike.counting import Counter
from acmelike.datasets import DatasetIterator
from acmelike.specs import EnvironmentSpec
from acmelike.wrappers.pettingzoo_adapter import agent_ids
from agents.multiagent import agent_spec, policy_groups


def single_agent_config(config, single: AgentDefinition, policy: str):
    """The single agent's config for `policy`: `config`'s values of its fields, its table named for the policy."""
    values = {field.name: getattr(config, field.name) for field in dataclasses.fields(single.config_class)}
    values["replay_table_name"] = f"{config.replay_table_name}_{policy}"
    return single.config_class(**values)


@dataclasses.dataclass(frozen=True)
class DecentralisedNetworks:
    """Per policy, the single agent's networks and the agents that run it; every agent id in environment order."""

    networks: Mapping[str, Any]
    agents: Mapping[str, tuple]
    agent_ids: tuple


def make_networks(environment_spec: EnvironmentSpec, config, *, single: AgentDefinition) -> DecentralisedNetworks:
    """`single`'s networks for each policy of `config.policy_mapping` (default: one per agent), on its agents'
    single-agent spec. ValueError naming the agents when the spec is not multi-agent, the mapping names an agent
    the environment lacks, or agents sharing a policy have different specs; the single agent's own ValueError
    when its networks do not fit an agent's spec."""
    name = f"independent {single.name}"
    groups = policy_groups(name, environment_spec, config.policy_mapping, default=lambda agent: agent)
    networks = {
        policy: single.make_networks(agent_spec(environment_spec, members[0]),
                                     single_agent_config(config, single, policy))
        for policy, members in groups.items()
    }
    return DecentralisedNetworks(networks=networks, agents=groups, agent_ids=agent_ids(environment_spec))


class _JointIterator(DatasetIterator[Dict[str, Any]]):
    """{policy: next batch of its dataset}; `samples_per_next` and `ready` cover every policy's dataset."""

    def __init__(self, datasets: Mapping[str, DatasetIterator]):
        self._datasets = dict(datasets)

    @property
    def samples_per_next(self) -> Dict[str, int]:
        wanted = {}
        for dataset in self._datasets.values():
            wanted.update(dataset.samples_per_next)
        return wanted

    def ready(self) -> bool:
        return all(dataset.ready() for dataset in self._datasets.values())

    def __next__(self) -> Dict[str, Any]:
        return {policy: next(dataset) for policy, dataset in self._datasets.items()}

    def close(self, timeout: Optional[float] = None) -> None:
        for dataset in self._datasets.values():
            dataset.close()


class _Slot(Iterator):
    """Serves a policy's learner the batch its joint step just took (one batch per step)."""

    def __init__(self):
        self.batch = None

    def __next__(self):
        batch, self.batch = self.batch, None
        return batch


class _PrefixedLogger:
    """Writes a policy learner's metrics as `<policy>/<metric>` columns."""

    def __init__(self, logger, policy: str):
        self._logger, self._policy = logger, policy

    def write(self, data: Mapping[str, Any]) -> None:
        self._logger.write({f"{self._policy}/{key}": value for key, value in data.items()})

    def close(self) -> None:
        pass  # the shared logger is closed by its owner


class DecentralisedLearner(core.Learner, core.Saveable):
    """Steps every policy's learner once per step, each on its part of one joint batch; counts joint steps."""

    def __init__(self, learners: Mapping[str, core.Learner], slots: Mapping[str, _Slot], dataset: Iterator,
                 counter: Optional[Counter]):
        self._learners, self._slots, self._dataset, self._counter = dict(learners), slots, dataset, counter

    def step(self) -> None:
        batches = next(self._dataset)
        for policy, learner in self._learners.items():
            self._slots[policy].batch = batches[policy]
            learner.step()
        if self._counter is not None:
            self._counter.increment(steps=1)

    def log_every_step(self) -> None:
        """What `SGDLearner.log_every_step` does, for every policy's learner (the runner's reproducible mode)."""
        for learner in self._learners.values():
            learner.log_every_step()

    def get_variables(self, names):
        return [{policy: learner.get_variables([name])[0] for policy, learner in self._learners.items()}
                for name in names]

    def save(self):
        return {policy: learner.save() for policy, learner in self._learners.items()}

    def restore(self, state) -> None:
        for policy, learner in self._learners.items():
            learner.restore(state[policy])


class _PolicyVariables(core.VariableSource):
    """One policy's share of a source serving {policy: parameters}."""

    def __init__(self, source: core.VariableSource, policy: str):
        self._source, self._policy = source, policy

    def get_variables(self, names):
        return [variables[self._policy] for variables in self._source.get_variables(names)]


class AgentAdders(Adder):
    """One single-agent adder per agent; `DecentralisedActor` feeds each its agent's timesteps, so the joint
    `add_first`/`add` are not offered."""

    def __init__(self, adders: Mapping[str, Adder]):
        self.adders = dict(adders)

    def add_first(self, timestep):
        raise NotImplementedError("AgentAdders holds one adder per agent: DecentralisedActor feeds them.")

    def add(self, action, next_timestep, extras=()):
        raise NotImplementedError("AgentAdders holds one adder per agent: DecentralisedActor feeds them.")

    def reset(self) -> None:
        for adder in self.adders.values():
            adder.reset()

    def close(self) -> None:
        for adder in self.adders.values():
            adder.close()

    def interrupt(self) -> None:
        for adder in self.adders.values():
            adder.interrupt()


class DecentralisedActor(core.Actor, core.Saveable):
    """One single-agent actor per agent; multi-agent timesteps are split into each active agent's own.

    Agent i's episode runs from its first active observation to the timestep at which it leaves (or the episode
    ends): that one is its LAST, with its reward and discount. Absent agents get a placeholder action (zeros of
    their action spec), which the environment never uses.
    """

    def __init__(self, actors: Mapping[str, core.Actor], action_specs: Mapping[str, Any]):
        self._actors = dict(actors)
        self._placeholders = {agent: np.zeros(spec.shape, spec.dtype) for agent, spec in action_specs.items()}
        self._live: Dict[str, bool] = {agent: False for agent in actors}

    def select_action(self, observation):
        return {agent: actor.select_action(observation[agent].observation) if self._live[agent]
                else self._placeholders[agent] for agent, actor in self._actors.items()}

    def observe_first(self, timestep: dm_env.TimeStep) -> None:
        for agent in self._actors:
            self._live[agent] = False
        self._start_new_agents(timestep)

    def _start_new_agents(self, timestep: dm_env.TimeStep) -> None:
        for agent, actor in self._actors.items():
            if not self._live[agent] and bool(timestep.observation[agent].active) and not timestep.last():
                self._live[agent] = True
                actor.observe_first(dm_env.restart(timestep.observation[agent].observation))

    def observe(self, action, next_timestep: dm_env.TimeStep) -> None:
        for agent, actor in self._actors.items():
            if not self._live[agent]:
                continue
            observation = next_timestep.observation[agent]
            ends = next_timestep.last() or not bool(observation.active)
            step_type = dm_env.StepType.LAST if ends else dm_env.StepType.MID
            actor.observe(action[agent], dm_env.TimeStep(step_type, next_timestep.reward[agent],
                                                         next_timestep.discount[agent], observation.observation))
            self._live[agent] = not ends
        self._start_new_agents(next_timestep)

    def update(self, wait: bool = False) -> None:
        for actor in self._actors.values():
            actor.update(wait)

    def save(self):
        return {agent: actor.save() for agent, actor in self._actors.items() if isinstance(actor, core.Saveable)}

    def restore(self, state) -> None:
        for agent, actor_state in state.items():
            self._actors[agent].restore(actor_state)


class DecentralisedBuilder(ActorLearnerBuilder[DecentralisedNetworks, Dict[str, Any]]):
    """Independent learners of the single-agent agent `single`, one per policy; see the module docstring."""

    def __init__(self, config, *, single: AgentDefinition):
        self.config = config
        self._single = single

    def policy_builder(self, policy: str) -> ActorLearnerBuilder:
        """The single agent's builder of `policy` (its config, its table named for the policy)."""
        return self._single.make_builder(single_agent_config(self.config, self._single, policy))

    def make_policy(self, *, networks: DecentralisedNetworks, environment_spec: EnvironmentSpec,
                    evaluation: bool = False) -> Dict[str, Any]:
        return {
            policy: self.policy_builder(policy).make_policy(
                networks=networks.networks[policy],
                environment_spec=agent_spec(environment_spec, networks.agents[policy][0]), evaluation=evaluation)
            for policy in networks.networks
        }

    def _groups(self, environment_spec) -> Dict[str, tuple]:
        return policy_groups(f"independent {self._single.name}", environment_spec, self.config.policy_mapping,
                             default=lambda agent: agent)

    def make_replay_tables(self, *, environment_spec: EnvironmentSpec, policy: Dict[str, Any]) -> list:
        groups = self._groups(environment_spec)
        return [table for name in groups for table in self.policy_builder(name).make_replay_tables(
            environment_spec=agent_spec(environment_spec, groups[name][0]), policy=policy[name])]

    def make_dataset_iterator(self, *, replay_client) -> DatasetIterator:
        # Which policies there are depends on the spec, which this method is not given: the replay's tables
        # (`<replay_table_name>_<policy>`, from make_replay_tables) say.
        prefix = f"{self.config.replay_table_name}_"
        names = [table[len(prefix):] for table in replay_client.server_info() if table.startswith(prefix)]
        return _JointIterator({name: self.policy_builder(name).make_dataset_iterator(replay_client=replay_client)
                               for name in names})

    def make_adder(self, *, replay_client, environment_spec: EnvironmentSpec, policy: Dict[str, Any]) -> Adder:
        groups = self._groups(environment_spec)
        return AgentAdders({
            agent: self.policy_builder(name).make_adder(replay_client=replay_client,
                                                  environment_spec=agent_spec(environment_spec, members[0]),
                                                  policy=policy[name])
            for name, members in groups.items() for agent in members
        })

    def make_learner(self, *, random_key, networks: DecentralisedNetworks, dataset: Iterator,
                     environment_spec: EnvironmentSpec, replay_client=None, counter=None,
                     logger=None) -> core.Learner:
        learners, slots = {}, {}
        for index, (name, members) in enumerate(networks.agents.items()):
            slots[name] = _Slot()
            learners[name] = self.policy_builder(name).make_learner(
                random_key=jax.random.fold_in(random_key, index), networks=networks.networks[name],
                dataset=slots[name], environment_spec=agent_spec(environment_spec, members[0]),
                replay_client=replay_client, counter=Counter(time_delta=0.0),
                logger=None if logger is None else _PrefixedLogger(logger, name),
            )
        return DecentralisedLearner(learners, slots, dataset, counter)

    def make_actor(self, *, random_key, policy: Dict[str, Any], environment_spec: EnvironmentSpec,
                   variable_source: Optional[core.VariableSource] = None,
                   adder: Optional[Adder] = None, num_envs: Optional[int] = None) -> core.Actor:
        if num_envs is not None:
            raise ValueError(f"Independent learners act in one multi-agent environment; num_envs={num_envs} was asked "
                             "for. Run them without --num-envs.")
        groups = self._groups(environment_spec)
        actors = {}
        for index, agent in enumerate(agent_ids(environment_spec)):
            name = next(n for n, members in groups.items() if agent in members)
            actors[agent] = self.policy_builder(name).make_actor(
                random_key=jax.random.fold_in(random_key, index), policy=policy[name],
                environment_spec=agent_spec(environment_spec, agent),
                variable_source=None if variable_source is None else _PolicyVariables(variable_source, name),
                adder=None if adder is None else adder.adders[agent],
            )
        return DecentralisedActor(actors, environment_spec.actions)
