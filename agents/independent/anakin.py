"""Independent learners' fully jitted form (Anakin): every policy of `policy_mapping` acts and learns with its
single agent's own Anakin pieces and pure `update_step`, on JaxMARL's MPE environments (`acmelike.anakin.jaxmarl`).

The environments step jointly, and each agent is its own episode stream, as `DecentralisedBuilder`'s one adder per
agent makes it. Policies whose agents have the same observation and action specs, and as many agents each, form a
bucket: a bucket's policies are stacked and run under one `vmap` over policies (and one over each policy's
agents), so the default mapping on MPE (every agent its own policy, all agents alike) is one single agent, vmapped.

- On-policy single agents (PPO): `acmelike.anakin.streams.on_policy_agent` with one policy acting for every
  agent. `batch_size` environments each write one sequence of `unroll_length + 1` rows per agent per iteration; a
  policy shared by k agents takes k learner steps, one on each of its agents' `batch_size` sequences, so a learner
  step takes what `batch_size` says, as for one agent.
- Off-policy single agents (DQN): `acmelike.anakin.off_policy`'s pieces. A `TransitionRecorder` records the joint
  steps of `num_sgd_steps_per_step * batch_size / samples_per_insert` environments (one row each per iteration);
  each policy's `TransitionReplay` holds its agents' streams, with `priority_exponent` as DQN's form has it, and a
  policy shared by k agents, inserting k times the transitions, takes k * `num_sgd_steps_per_step` SGD steps per
  iteration, so that `samples_per_insert` holds for it exactly. As `DecentralisedLearner` steps every policy's
  learner together, every policy learns once every replay holds `min_replay_size` transitions.

Metrics are logged as `<policy>/<metric>`, as the other runners' learner logs name them; episode returns are the
team's. MPE's agents never leave before the episode ends, so every agent's stream ends with the episode.
"""

import dataclasses
import functools
from typing import Any, Dict, NamedTuple, Sequence, Tuple

import jax
import jax.numpy as jnp

from acmelike.actors.actor_core import ActorCore
from acmelike.anakin import JaxEnvironment, TransitionRecorder, on_policy_agent
from acmelike.anakin.agent import AnakinAgent, IterationOutputs
from acmelike.anakin.off_policy import TransitionReplay, environments_and_rows, learn_or_wait, sgd_steps
from acmelike.anakin.transitions import StepRecord
from acmelike.builders import AgentDefinition
from acmelike.types import ReplaySample, Step
from agents.independent.builder import DecentralisedBuilder, make_networks
from agents.multiagent import agent_spec
from agents.off_policy import OffPolicyBuilder
from agents.on_policy import OnPolicyBuilder


class _Bucket(NamedTuple):
    """Policies run under one vmap: `agents[p]` are policy `policies[p]`'s agents, as many for every policy."""

    policies: Tuple[str, ...]
    agents: Tuple[Tuple[str, ...], ...]

    @property
    def shape(self) -> Tuple[int, int]:
        return len(self.policies), len(self.agents[0])

    def _flat(self) -> Tuple[str, ...]:
        return tuple(agent for members in self.agents for agent in members)

    def stack(self, by_agent: Dict[str, Any]):
        """{agent: pytree [...]} -> one pytree [P, k, ...] (policies, their agents)."""
        return jax.tree_util.tree_map(lambda *xs: jnp.stack(xs).reshape(self.shape + xs[0].shape),
                                      *[by_agent[agent] for agent in self._flat()])

    def unstack(self, stacked) -> Dict[str, Any]:
        """`stack`'s inverse."""
        return {agent: jax.tree_util.tree_map(lambda x: x.reshape((-1,) + x.shape[2:])[index], stacked)
                for index, agent in enumerate(self._flat())}


def _buckets(groups: Dict[str, Tuple[str, ...]], spec) -> Tuple[_Bucket, ...]:
    """`groups` ({policy: its agents}, `policy_groups`' order) cut into buckets, each in order of first policy."""
    buckets = []  # (first agent's spec, agents per policy, policies, their agents)
    for policy, members in groups.items():
        own = agent_spec(spec, members[0])
        for first, size, policies, agents in buckets:
            if size == len(members) and (first.observations, first.actions) == (own.observations, own.actions):
                policies.append(policy)
                agents.append(members)
                break
        else:
            buckets.append((own, len(members), [policy], [members]))
    return tuple(_Bucket(tuple(policies), tuple(agents)) for _, _, policies, agents in buckets)


def _observations(observation: Dict[str, Any]) -> Dict[str, Any]:
    """Per agent, its single-agent observation (without the multi-agent `active` flag)."""
    return {agent: value.observation for agent, value in observation.items()}


def _twice(function, params_axis=0):
    """`function` vmapped over a bucket's agents (inner, parameters shared) and its policies (outer)."""
    return jax.vmap(jax.vmap(function, in_axes=(None, 0, 0)), in_axes=(params_axis, 0, 0))


def _team_policy(buckets: Sequence[_Bucket], cores: Sequence[ActorCore]) -> ActorCore:
    """One `ActorCore` acting for every agent: parameters (one per bucket, stacked [P, ...]), observations
    ({agent: AgentObservation}) and actions per agent; the state is {agent: its policy's state}, each agent with
    its own (its own key and exploration clock, as each agent's own actor in the other runners)."""

    def per_bucket(function, state, *arguments):
        merged = {}
        for bucket, core, *rest in zip(buckets, cores, *arguments):
            merged.update(bucket.unstack(function(core, bucket, bucket.stack(state), *rest)))
        return merged

    def init(key):
        agents = [agent for bucket in buckets for agent in bucket._flat()]
        keys = dict(zip(agents, jax.random.split(key, len(agents))))
        return per_bucket(lambda core, bucket, keys: jax.vmap(jax.vmap(core.init))(keys), keys)

    def select_action(params, observation, state):
        observations = _observations(observation)
        actions, states = {}, {}
        for bucket, core, bucket_params in zip(buckets, cores, params):
            action, new = _twice(core.select_action)(bucket_params, bucket.stack(observations), bucket.stack(state))
            actions.update(bucket.unstack(action))
            states.update(bucket.unstack(new))
        return actions, states

    def get_extras(state):
        return per_bucket(lambda core, bucket, state: jax.vmap(jax.vmap(core.get_extras))(state), state)

    def on_episode_start(state):
        return per_bucket(lambda core, bucket, state: jax.vmap(jax.vmap(core.on_episode_start))(state), state)

    return ActorCore(init=init, select_action=select_action, get_extras=get_extras, on_episode_start=on_episode_start)


class _Parts(NamedTuple):
    """A bucket's single-agent pieces, those of its first policy (its policies differ only in their table names):
    its policy, its learning step (`LearningParts` but for the state) and its training state from a key."""

    policy: ActorCore
    update_step: Any
    policy_params: Any
    loss_keys: Tuple[str, ...]
    init_state: Any  # key -> the initial training state

    @classmethod
    def of(cls, builder, networks, spec) -> "_Parts":
        def learning_parts(key):
            return builder.learning_parts(networks=networks, environment_spec=spec, random_key=key)

        parts = learning_parts(jax.random.PRNGKey(0))  # its update step, losses and policy parameters
        return cls(builder.make_policy(networks=networks, environment_spec=spec), parts.update_step,
                   parts.policy_params, tuple(parts.loss_keys), lambda key: learning_parts(key).state)


def _init_states(buckets, parts, key) -> tuple:
    """Every bucket's training states, stacked [P, ...], each policy from its own key."""
    keys = jax.random.split(key, len(buckets))
    return tuple(jax.vmap(part.init_state)(jax.random.split(key, bucket.shape[0]))
                 for bucket, part, key in zip(buckets, parts, keys))


def _policy_params(parts, states) -> tuple:
    """What the team's policy acts with: every bucket's policy parameters, stacked [P, ...]."""
    return tuple(jax.vmap(part.policy_params)(state) for part, state in zip(parts, states))


def _named_metrics(bucket: _Bucket, metrics: Dict[str, jax.Array]) -> Dict[str, jax.Array]:
    """A bucket's metrics [P, ...] as `<policy>/<metric>` scalars (the mean over the rest)."""
    return {f"{policy}/{name}": jnp.mean(value[index])
            for name, value in metrics.items() for index, policy in enumerate(bucket.policies)}


def _loss_keys(buckets, parts) -> Tuple[str, ...]:
    return tuple(f"{policy}/{key}" for bucket, part in zip(buckets, parts)
                 for key in part.loss_keys for policy in bucket.policies)


def _on_policy_form(name, environment, config, buckets, parts) -> AnakinAgent:
    """`on_policy_agent` with the team's policy and an update that runs each policy's own update step."""
    def update_step(states, sample: ReplaySample):
        rows = sample.data  # Step of per-agent dicts [B, T + 1]
        new_states, metrics = [], {}
        for bucket, state, part in zip(buckets, states, parts):
            data = Step(
                observation=bucket.stack(_observations(rows.observation)),
                action=bucket.stack(rows.action),
                reward=bucket.stack(rows.reward),
                discount=bucket.stack(rows.discount),
                start_of_episode=jnp.broadcast_to(rows.start_of_episode, bucket.shape + rows.start_of_episode.shape),
                extras=bucket.stack(rows.extras),
            )

            # data [k, B, T + 1]: one learner step on each agent's rows.
            def policy_steps(state, data, update=part.update_step):
                def learner_step(state, agent_rows):
                    state, step_metrics, _ = update(state, ReplaySample(sample.info, agent_rows))
                    return state, step_metrics

                return jax.lax.scan(learner_step, state, data)

            state, bucket_metrics = jax.vmap(policy_steps)(state, data)
            new_states.append(state)
            metrics.update(_named_metrics(bucket, bucket_metrics))
        return tuple(new_states), metrics, {}

    agent = on_policy_agent(
        name, environment, config,
        policy=_team_policy(buckets, [part.policy for part in parts]),
        init_training_state=functools.partial(_init_states, buckets, parts),
        update_step=update_step,
        policy_params=functools.partial(_policy_params, parts),
    )
    return dataclasses.replace(agent, loss_keys=_loss_keys(buckets, parts))


def _agent_records(records: StepRecord, agent: str) -> StepRecord:
    """One agent's single-agent records out of the team's."""
    return StepRecord(
        observation=records.observation[agent].observation,
        action=records.action[agent],
        reward=records.reward[agent],
        discount=records.discount[agent],
        last=records.last,
        next_observation=records.next_observation[agent].observation,
        extras=records.extras[agent],
    )


def _streams(bucket: _Bucket, records: StepRecord):
    """The bucket's records [P, k * B, L]: each policy's agents' streams side by side (agent-major)."""
    stacked = bucket.stack({agent: _agent_records(records, agent) for agent in bucket._flat()})
    return jax.tree_util.tree_map(lambda x: x.reshape((bucket.shape[0], -1) + x.shape[3:]), stacked)


def _off_policy_form(name, environment, config, buckets, parts) -> AnakinAgent:
    """A `TransitionRecorder` of the team, a `TransitionReplay` per policy and its own SGD steps."""
    num_envs, rows_per_env = environments_and_rows(name, config, None)
    recorder = TransitionRecorder(environment, _team_policy(buckets, [part.policy for part in parts]),
                                  config.variable_update_period)
    replays = [TransitionReplay.from_config(config, num_envs * bucket.shape[1], rows_per_env, config.priority_exponent)
               for bucket in buckets]

    params_of = functools.partial(_policy_params, parts)

    def init(key):
        learner_key, recorder_key, key = jax.random.split(key, 3)
        states = _init_states(buckets, parts, learner_key)
        recorder_state = recorder.init(recorder_key, num_envs, params_of(states))
        # The shapes of one environment's record, without compiling a step into `init`.
        example = jax.eval_shape(recorder.record, params_of(states), recorder_state, key)[1]
        one = jax.tree_util.tree_map(lambda x: jnp.zeros(x.shape[1:], x.dtype), example)
        replay_states = tuple(  # one empty replay per policy, stacked [P, ...]
            jax.tree_util.tree_map(lambda x, count=bucket.shape[0]: jnp.broadcast_to(x, (count,) + x.shape),
                                   replay.init(_agent_records(one, bucket.agents[0][0])))
            for replay, bucket in zip(replays, buckets))
        return states, recorder_state, replay_states, key

    def iteration(carry):
        states, recorder_state, replay_states, key = carry
        key, unroll_key, sample_key = jax.random.split(key, 3)
        recorder_state, records, ends = recorder.unroll(params_of(states), recorder_state, unroll_key, rows_per_env)
        replay_states = tuple(jax.vmap(replay.add)(replay_state, _streams(bucket, records))
                              for replay, replay_state, bucket in zip(replays, replay_states, buckets))
        can_sample = jnp.all(jnp.stack([jnp.all(jax.vmap(replay.can_sample)(replay_state))
                                        for replay, replay_state in zip(replays, replay_states)]))
        # A policy of k agents: k * num_sgd_steps_per_step SGD steps, each from its own key.
        bucket_keys = [
            jax.random.split(key, bucket.shape[0] * bucket.shape[1] * config.num_sgd_steps_per_step).reshape(
                (bucket.shape[0], -1) + key.shape)
            for bucket, key in zip(buckets, jax.random.split(sample_key, len(buckets)))]

        def learn(carry):
            results = [
                jax.vmap(functools.partial(sgd_steps, replay, part.update_step))(replay_state, bucket_carry, keys)
                for replay, part, replay_state, bucket_carry, keys in zip(
                    replays, parts, replay_states, zip(*carry), bucket_keys)
            ]
            carries = tuple(zip(*[result[0] for result in results]))
            metrics = {}
            for bucket, (_, bucket_metrics) in zip(buckets, results):
                metrics.update(_named_metrics(bucket, bucket_metrics))
            return carries, metrics

        learned, (states, priorities), metrics = learn_or_wait(
            can_sample, learn, (states, tuple(replay_state.priorities for replay_state in replay_states)))
        replay_states = tuple(replay_state._replace(priorities=p) for replay_state, p in zip(replay_states, priorities))
        outputs = IterationOutputs(ends.team, jnp.ones_like(ends.team, bool), learned, metrics, ends.agents)
        return (states, recorder_state, replay_states, key), outputs

    return AnakinAgent(name, init, iteration, num_envs, rows_per_env, lambda carry: params_of(carry[0]), config,
                       loss_keys=_loss_keys(buckets, parts))


def make_anakin_agent(environment: JaxEnvironment, config, *, single: AgentDefinition) -> AnakinAgent:
    """`independent_<single>`'s Anakin form on a multi-agent JAX environment (module docstring): on-policy or
    off-policy as `single`'s builder is. ValueError naming the agents as `make_networks` does (the spec is not
    multi-agent, `policy_mapping` names an agent the environment lacks, agents sharing a policy differ)."""
    name = f"independent_{single.name}"
    networks = make_networks(environment.spec, config, single=single)
    builder = DecentralisedBuilder(config, single=single)
    buckets = _buckets(dict(networks.agents), environment.spec)
    builders = [builder.policy_builder(bucket.policies[0]) for bucket in buckets]
    parts = [_Parts.of(policy_builder, networks.networks[bucket.policies[0]],
                       agent_spec(environment.spec, bucket.agents[0][0]))
             for policy_builder, bucket in zip(builders, buckets)]
    if isinstance(builders[0], OnPolicyBuilder):
        return _on_policy_form(name, environment, config, buckets, parts)
    if isinstance(builders[0], OffPolicyBuilder):
        return _off_policy_form(name, environment, config, buckets, parts)
    raise ValueError(f"{name}: no Anakin form for a {type(builders[0]).__name__} (neither on- nor off-policy).")
