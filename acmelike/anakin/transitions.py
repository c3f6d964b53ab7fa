"""TransitionRecorder: a batch of JAX environments acting under an `ActorCore`, one `StepRecord` per step, and
`n_step_transitions`, which turns n consecutive records into the n-step `Transition`s that an
`NStepTransitionAdder` writes, so DQN's `update_step` consumes them unchanged.

Records go into a `TrajectoryBuffer` (a time axis per environment); sampling sequences of n records and
reducing them on the device replaces the adder's host-side n-step buffer.

    recorder = TransitionRecorder(environment, policy, variable_update_period=10)
    state = recorder.init(key, num_envs, params)
    state, records, ends = recorder.unroll(params, state, key, length)   # records [B, length], ends [length, B]
    transitions = n_step_transitions(sampled_records, discount)                     # [N, n] -> [N]

Observations, actions, rewards and discounts may be nests (a multi-agent environment's per-agent dicts,
`acmelike.anakin.jaxmarl`): records keep them so, and the episode return is the team's, each agent's beside it
(`EpisodeReturns`).

The actors keep their own copy of the parameters, as a `VariableClient` does: `unroll` takes the learner's and
the copy takes them every `variable_update_period` steps (at steps 0, period, 2 * period, ... of each
environment), so an agent's `variable_update_period` means what it means in the other runners.
"""

from typing import Any, NamedTuple

import jax
import jax.numpy as jnp

from acmelike.actors.actor_core import ActorCore
from acmelike.anakin.environment import JaxEnvironment, select_envs
from acmelike.anakin.episodes import EpisodeReturns
from acmelike.anakin.variable_updates import check_variable_update_period, fetch_due
from acmelike.types import Transition


class StepRecord(NamedTuple):
    """One environment step: (o_t, a_t, r_t, d_t) with `last` (the episode ended here) and o_{t+1}, the real
    next observation (the episode's last one when `last`, not the next episode's first)."""

    observation: jax.Array
    action: jax.Array
    reward: jax.Array
    discount: jax.Array
    last: jax.Array
    next_observation: jax.Array
    extras: Any = ()


class RecorderState(NamedTuple):
    env_state: Any
    observation: jax.Array
    actor_state: Any
    returns: EpisodeReturns
    params: Any  # the actors' copy of the learner's parameters
    steps: jax.Array  # int32 []: steps each environment has taken


def n_step_transitions(records: StepRecord, discount: float) -> Transition:
    """n-step transitions from records shaped [N, n] (n consecutive steps of one environment each).

    For the step at position 0, with m <= n the steps up to and including the episode's last one (m = n if the
    episode goes on): reward = sum_{k<m} gamma^k (prod_{j<k} d_j) r_k, discount = prod_{k<m} gamma d_k (the total
    discount, as `Transition` documents), next_observation = the m-th step's next observation. These are the
    transitions of an `NStepTransitionAdder`, episode ends included (where it writes shorter transitions).
    """
    rewards = records.reward.astype(jnp.float32)
    discounts = discount * records.discount.astype(jnp.float32)
    # included[k]: no episode ended before step k.
    ended_before = jnp.cumsum(records.last.astype(jnp.int32), axis=1) - records.last.astype(jnp.int32)
    included = (ended_before == 0).astype(jnp.float32)
    # Discount from step 0 to step k (exclusive), and to just after step k (inclusive).
    to_after = jnp.cumprod(discounts * included + (1.0 - included), axis=1)
    to_before = jnp.concatenate([jnp.ones_like(to_after[:, :1]), to_after[:, :-1]], axis=1)
    num_included = jnp.sum(included, axis=1).astype(jnp.int32)
    index = num_included - 1
    take = lambda x: jax.vmap(lambda row, i: row[i])(x, index)  # noqa: E731
    return Transition(
        observation=records.observation[:, 0],
        action=records.action[:, 0],
        reward=jnp.sum(included * to_before * rewards, axis=1),
        discount=take(to_after),
        next_observation=take(records.next_observation),
        extras=jax.tree_util.tree_map(lambda x: x[:, 0], records.extras),
    )


class TransitionRecorder:
    def __init__(self, environment: JaxEnvironment, policy: ActorCore, variable_update_period: int = 1):
        check_variable_update_period("TransitionRecorder", variable_update_period)
        self._policy = policy
        self._action_spec = environment.spec.actions
        self._reward_spec = environment.spec.rewards
        self._variable_update_period = variable_update_period
        self._reset = jax.vmap(environment.reset)
        self._step = jax.vmap(environment.step)
        self._select_action = jax.vmap(policy.select_action, in_axes=(None, 0, 0))
        self._get_extras = jax.vmap(policy.get_extras)
        self._on_episode_start = jax.vmap(policy.on_episode_start)
        # Jitted so that it is traced once per shape: the shapes `init` reads of it come from the trace an unroll
        # then reuses (tracing the policy twice was a tenth of an agent's lowering time).
        self.record = jax.jit(self._record)

    def init(self, key: jax.Array, num_envs: int, params) -> RecorderState:
        """`num_envs` environments just reset; `params` (the learner's initial parameters) is the actors' copy."""
        env_key, actor_key = jax.random.split(key)
        env_state, observation = self._reset(jax.random.split(env_key, num_envs))
        actor_state = self._on_episode_start(jax.vmap(self._policy.init)(jax.random.split(actor_key, num_envs)))
        returns = EpisodeReturns.zeros(num_envs, self._reward_spec)
        return RecorderState(env_state, observation, actor_state, returns, params, jnp.zeros((), jnp.int32))

    def _record(self, learner_params, state: RecorderState, key: jax.Array):
        """One step of every environment (reset right after its episode's last step), acting with the actors' copy
        of the parameters, taken from `learner_params` first if a fetch is due: returns (state, StepRecord [B],
        `EpisodeEnds` [B]: the returns of the episodes that ended, NaN elsewhere)."""
        num_envs = state.returns.current.shape[0]
        step_key, reset_key = jax.random.split(key)
        period = self._variable_update_period
        params = learner_params if period == 1 else fetch_due(learner_params, state.params, state.steps, period)
        action, actor_state = self._select_action(params, state.observation, state.actor_state)
        env_state, timestep = self._step(jax.random.split(step_key, num_envs), state.env_state, action)
        reset_env_state, reset_observation = self._reset(jax.random.split(reset_key, num_envs))
        record = StepRecord(
            observation=state.observation,
            action=jax.tree_util.tree_map(lambda a, s: a.astype(s.dtype), action, self._action_spec),
            reward=timestep.reward,
            discount=timestep.discount,
            last=timestep.last,
            next_observation=timestep.observation,
            extras=self._get_extras(actor_state),
        )
        returns, ended = state.returns.add(timestep.reward, timestep.last, jnp.ones_like(timestep.last))
        last = timestep.last
        new_state = RecorderState(
            env_state=select_envs(last, reset_env_state, env_state),
            observation=select_envs(last, reset_observation, timestep.observation),
            actor_state=select_envs(last, self._on_episode_start(actor_state), actor_state),
            returns=returns,
            params=params,
            steps=state.steps + 1,
        )
        return new_state, record, ended

    def unroll(self, learner_params, state: RecorderState, key: jax.Array, length: int):
        """`length` steps per environment: returns (state, StepRecord [B, length], EpisodeEnds [length, B])."""

        def body(state, key):
            state, record, ended = self.record(learner_params, state, key)
            return state, (record, ended)

        state, (records, ends) = jax.lax.scan(body, state, jax.random.split(key, length))
        return state, jax.tree_util.tree_map(lambda x: jnp.swapaxes(x, 0, 1), records), ends
