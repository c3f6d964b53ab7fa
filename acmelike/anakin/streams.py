"""StepStream: a batch of JAX environments acting under an `ActorCore`, written as `Step` rows exactly as a
`SequenceAdder` with `EndBehavior.CONTINUE` writes them, so PPO's and IPPO's `update_step`s consume them
unchanged; `on_policy_agent` makes such an agent's Anakin form from its policy and update step.

The adder's stream of one environment holds, per episode of n actions, n rows Step(o_t, a_t, r_t, d_t,
start_t, extras_t) and then a padding row Step(o_last, 0, 0, 0, False, 0); the next episode's first row has
start_of_episode True. Here every row is one slot of a `lax.scan`: a slot that holds a padding row steps no
environment (its action and the environment's step are computed under `vmap` with the other slots and thrown
away) and resets the environment, so the next slot starts an episode. Rows are therefore not all environment
steps: `real` marks the ones that are.

Actions, rewards and discounts may be nests (a multi-agent environment's per-agent dicts,
`acmelike.anakin.jaxmarl`): the padding row zeroes every leaf, and the episode return is the team's, each agent's
beside it (`EpisodeReturns`).

    stream = StepStream(environment, policy)
    state = stream.init(key, num_envs)
    state, rows, outputs = stream.unroll(params, state, key, length)     # rows: Step [B, length]
    bootstrap = stream.next_row(state)                                   # the row after them, [B]

With `variable_update_period` k > 1, each environment's actor keeps its own copy of the learner's parameters, as a
`VariableClient` does for the other runners' actors, and takes the ones `unroll` is given at its actions 0, k,
2k, ... (`init` then needs the parameters' shapes). The padding row takes no action, so it does not advance the
count.
"""

from typing import Any, Callable, Dict, NamedTuple, Optional

import jax
import jax.numpy as jnp

from acmelike.actors.actor_core import ActorCore
from acmelike.anakin.agent import AnakinAgent, IterationOutputs, uniform_sample_info
from acmelike.anakin.environment import JaxEnvironment, select_envs
from acmelike.anakin.episodes import EpisodeReturns
from acmelike.anakin.variable_updates import check_variable_update_period, fetch_due
from acmelike.types import ReplaySample, Step


class StreamState(NamedTuple):
    """Where each of B environments' streams stands: the row to be written next. All fields [B, ...]."""

    env_state: Any
    observation: jax.Array  # the next row's observation
    start: jax.Array  # bool: the next row starts an episode
    padding: jax.Array  # bool: the next row is the padding row after an episode's last observation
    actor_state: Any
    returns: EpisodeReturns
    params: Any = None  # with variable_update_period > 1: each actor's copy of the learner's parameters
    actions: Optional[jax.Array] = None  # with variable_update_period > 1: int32, the actions each actor has taken


class StreamOutputs(NamedTuple):
    """Per row ([B]): `real` (an environment step was taken), `episode_return` (NaN unless an episode ended) and
    `agent_returns` (each agent's, by agent id; empty for one agent)."""

    real: jax.Array
    episode_return: jax.Array
    agent_returns: Dict[str, jax.Array]


def _zeros(spec, num_envs: int):
    """[B, ...] zeros shaped and typed as each leaf of `spec` (dm_env specs)."""
    return jax.tree_util.tree_map(lambda s: jnp.zeros((num_envs,) + tuple(s.shape), s.dtype), spec)


def _real_or_zero(real, nest, spec):
    """Per environment, `nest` where `real` else zeros, in `spec`'s dtypes (the adder's signature)."""
    kept = select_envs(real, nest, jax.tree_util.tree_map(jnp.zeros_like, nest))
    return jax.tree_util.tree_map(lambda x, s: x.astype(s.dtype), kept, spec)


class StepStream:
    def __init__(self, environment: JaxEnvironment, policy: ActorCore, variable_update_period: int = 1):
        check_variable_update_period("StepStream", variable_update_period)
        self._environment = environment
        self._spec = environment.spec
        self._policy = policy
        self._period = variable_update_period
        self._reset = jax.vmap(environment.reset)
        self._step = jax.vmap(environment.step)
        self._select_action = jax.vmap(policy.select_action, in_axes=(None, 0, 0))
        self._fetch_and_select_action = jax.vmap(self._fetch_and_act, in_axes=(None, 0, 0, 0, 0))
        self._get_extras = jax.vmap(policy.get_extras)
        self._on_episode_start = jax.vmap(policy.on_episode_start)

    def init(self, key: jax.Array, num_envs: int, params: Any = None) -> StreamState:
        """`num_envs` environments about to start an episode. With `variable_update_period` > 1, `params` (arrays
        or shapes like the learner's parameters) shapes the actors' copies, which their first actions fetch."""
        env_key, actor_key = jax.random.split(key)
        env_state, observation = self._reset(jax.random.split(env_key, num_envs))
        actor_state = self._on_episode_start(jax.vmap(self._policy.init)(jax.random.split(actor_key, num_envs)))
        copies, actions = None, None
        if self._period > 1:
            if params is None:
                raise ValueError("StepStream.init: with variable_update_period > 1 the actors keep copies of the "
                                 "parameters, so pass `params` (arrays or shapes like the learner's).")
            copies = jax.tree_util.tree_map(lambda x: jnp.zeros((num_envs,) + tuple(x.shape), x.dtype), params)
            actions = jnp.zeros((num_envs,), jnp.int32)
        return StreamState(
            env_state=env_state,
            observation=observation,
            start=jnp.ones((num_envs,), bool),
            padding=jnp.zeros((num_envs,), bool),
            actor_state=actor_state,
            returns=EpisodeReturns.zeros(num_envs, self._spec.rewards),
            params=copies,
            actions=actions,
        )

    def _fetch_and_act(self, learner_params, copy, actions, observation, actor_state):
        """One actor's action with its copy of the parameters, fetched first from the learner's if its count of
        actions is a multiple of the period: returns (action, actor state, the copy it acted with). Vmapped with
        the learner's parameters unbatched: broadcasting them to every environment before the select made
        MuZero's fully jitted run 1.25x slower (its quick bench)."""
        params = fetch_due(learner_params, copy, actions, self._period)
        action, actor_state = self._policy.select_action(params, observation, actor_state)
        return action, actor_state, params

    def next_row(self, state: StreamState) -> Step:
        """The row `state` would write next, as far as it is known before acting: its observation and
        start_of_episode (what PPO's update reads from the bootstrap row); action, reward, discount and extras
        zero."""
        num_envs = state.start.shape[0]
        extras = jax.tree_util.tree_map(jnp.zeros_like, self._get_extras(state.actor_state))
        return Step(
            observation=state.observation,
            action=_zeros(self._spec.actions, num_envs),
            reward=_zeros(self._spec.rewards, num_envs),
            discount=_zeros(self._spec.discounts, num_envs),
            start_of_episode=state.start,
            extras=extras,
        )

    def write_row(self, params, state: StreamState, key: jax.Array):
        """Writes one row per environment: returns (state, Step [B], StreamOutputs [B])."""
        num_envs = state.start.shape[0]
        step_key, reset_key = jax.random.split(key)
        if self._period == 1:
            action, actor_state = self._select_action(params, state.observation, state.actor_state)
        else:
            action, actor_state, copies = self._fetch_and_select_action(params, state.params, state.actions,
                                                                        state.observation, state.actor_state)
        env_state, timestep = self._step(jax.random.split(step_key, num_envs), state.env_state, action)
        reset_env_state, reset_observation = self._reset(jax.random.split(reset_key, num_envs))
        real = jnp.logical_not(state.padding)
        extras = self._get_extras(actor_state)
        row = Step(
            observation=state.observation,
            action=_real_or_zero(real, action, self._spec.actions),
            reward=_real_or_zero(real, timestep.reward, self._spec.rewards),
            discount=_real_or_zero(real, timestep.discount, self._spec.discounts),
            start_of_episode=state.start,
            extras=select_envs(real, extras, jax.tree_util.tree_map(jnp.zeros_like, extras)),
        )
        returns, ended = state.returns.add(timestep.reward, timestep.last, real)
        new_state = StreamState(
            env_state=select_envs(real, env_state, reset_env_state),
            observation=select_envs(real, timestep.observation, reset_observation),
            start=state.padding,
            padding=jnp.logical_and(real, timestep.last),
            actor_state=select_envs(real, actor_state, self._on_episode_start(state.actor_state)),
            returns=returns,
        )
        if self._period > 1:
            # A padding row keeps a copy it fetched: its count, not advanced, is still due, so the next action
            # fetches again, from the same learner or a newer one. Selecting the old copy back cost a select of
            # every parameter at every row: R2D2's fully jitted run on MemoryChain took 1.15x its bare loop's
            # wall time, and 0.99x without it (20k steps, median of 4 alternating pairs).
            new_state = new_state._replace(params=copies, actions=state.actions + real.astype(jnp.int32))
        return new_state, row, StreamOutputs(real=real, episode_return=ended.team, agent_returns=ended.agents)

    def unroll(self, params, state: StreamState, key: jax.Array, length: int):
        """`length` rows per environment by `lax.scan`: returns (state, Step [B, length], StreamOutputs [length, B])."""

        def body(state, key):
            state, row, outputs = self.write_row(params, state, key)
            return state, (row, outputs)

        state, (rows, outputs) = jax.lax.scan(body, state, jax.random.split(key, length))
        rows = jax.tree_util.tree_map(lambda x: jnp.swapaxes(x, 0, 1), rows)
        return state, rows, outputs


def on_policy_agent(name: str, environment: JaxEnvironment, config, policy: ActorCore,
                    init_training_state: Callable[[jax.Array], Any], update_step,
                    policy_params: Callable[[Any], Any] = lambda state: state.params) -> AnakinAgent:
    """The Anakin form of an agent that learns from a queue of CONTINUE sequences (PPO, IPPO, MAPPO):
    `config.batch_size` environments, each writing one sequence of `config.unroll_length + 1` rows per update
    (the last row, the next sequence's first, only bootstraps), exactly as the agent's queue would serve them.
    The sequences are learned from as soon as they are written, so the queue never holds more than one batch
    (`max_queue_size` never binds), and the actors act with the parameters of the latest update: a
    `variable_update_period` other than 1 is refused.

    `init_training_state(key)` -> a state whose `policy_params(state)` is what `policy` acts with (by default
    its `.params`); `update_step(state, sample)` -> (state, metrics, extras), the agent's own.
    """
    if config.variable_update_period != 1:
        raise ValueError(
            f"{name}'s Anakin form acts with the parameters of the latest update (its actors never fall behind "
            f"the learner), so variable_update_period={config.variable_update_period} cannot hold: set "
            f"variable_update_period=1 (the default)."
        )
    stream = StepStream(environment, policy)
    num_envs, length = config.batch_size, config.unroll_length

    def init(key):
        learner_key, stream_key, key = jax.random.split(key, 3)
        return init_training_state(learner_key), stream.init(stream_key, num_envs), key

    def iteration(carry):
        training_state, stream_state, key = carry
        key, unroll_key = jax.random.split(key)
        stream_state, rows, outputs = stream.unroll(policy_params(training_state), stream_state, unroll_key, length)
        bootstrap = stream.next_row(stream_state)
        data = jax.tree_util.tree_map(lambda r, b: jnp.concatenate([r, b[:, None]], axis=1), rows, bootstrap)
        sample = ReplaySample(info=uniform_sample_info(num_envs, num_envs), data=data)
        training_state, metrics, _ = update_step(training_state, sample)
        outputs = IterationOutputs(outputs.episode_return, outputs.real, jnp.asarray(True), metrics,
                                   outputs.agent_returns)
        return (training_state, stream_state, key), outputs

    return AnakinAgent(name, init, iteration, num_envs, length, lambda carry: policy_params(carry[0]), config)
