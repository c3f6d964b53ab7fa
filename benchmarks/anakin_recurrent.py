"""Anakin IMPALA and R2D2 on gymnax's MemoryChain-bsuite against bare jitted loops of the same configuration
written here: compile time and run time apart, side by side in one run, and the return reached.

Both sides, each agent's default config (what tests/engines/test_anakin_recurrent.py learns the chain with), the
agent's own network (`make_networks`: MLP torso, LSTM, heads) and its own pure `update_step`:
- IMPALA: 4 environments, each writing one sequence of 10 rows plus the bootstrap row per update, learned from at
  once (its queue never holds more than one batch), V-trace over the behaviour logits stored with each row;
- R2D2: 4 environments writing 10 rows an iteration, sequences of 4 burn-in + 16 trace + 1 rows starting every 10
  rows, 1 SGD step of 32 sequences per 4 inserted (samples_per_insert 8), prioritized (alpha 0.9, new sequences at
  1.0, each SGD step's priorities written back), learning once 100 sequences are held, each environment with its
  own Ape-X epsilon and its own copy of the parameters fetched every 20 of its actions.
Ours runs through `launch.engines.anakin` (what `--launch anakin --agent NAME` runs): `StepStream`, the
agent's actor core and, for R2D2, `SequenceReplay`. The baseline is written plainly (`bare_loop`): gymnax's
`step_env` with a padding row after an episode's last observation and a reset, as the CONTINUE adders write them,
the LSTM state carried from row to row; IMPALA's batch is the rows just written, R2D2's replay a flat ring of whole
sequences (each copied out of the environments' newest rows once complete), sampled in proportion to priority.
One jitted call of all iterations on each side.

Both sides run alternately (`repeats` times, seed = repeat index); run time is the median over repeats, compile
time the median of at least 5 ahead-of-time lower + compiles per side (`anakin_ppo.COMPILE_REPEATS`), alternating
too. The return is each run's last-20-episode mean.

    python benchmarks/anakin_recurrent.py [--agent impala r2d2] [--quick] [--repeats N] [--out benchmarks/results]

Each agent's record goes to `anakin_<agent>.json` (the report's `anakin_impala`, `anakin_r2d2`).
"""

import os
import sys
from typing import Optional

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

from benchmarks.anakin_off_policy import side_by_side, side_by_side_arguments  # noqa: E402

ENVIRONMENT, NUM_ENVS = "MemoryChain-bsuite", 4


def _where(mask, new, old):
    """Per environment ([E] bool): `new`'s rows where `mask`, `old`'s elsewhere, over matching pytrees."""
    return jax.tree_util.tree_map(
        lambda n, o: jnp.where(jnp.reshape(mask, mask.shape + (1,) * (o.ndim - 1)), n, o), new, old)


def bare_loop(iterations: int, rows_per_iteration: int, init_learner, act, learn, environment: str = ENVIRONMENT):
    """A bare jitted loop of Step rows on gymnax's `environment` (MemoryChain; MuZero's CartPole) around one
    agent's pieces, `NUM_ENVS` environments each writing `rows_per_iteration` Step rows per iteration:

      init_learner(key) -> (learner (its actors' own state included), the LSTM's initial state [E])
      act(learner, obs [E, O], lstm [E], key, real [E]) -> (action [E], next lstm, extras [E] to store, learner)
      learn(learner, rows (Step [E, rows_per_iteration]), next_row (Step [E]), key) -> learner

    A row after an episode's last observation is padding (no action, zero reward, discount and extras); the row
    after it starts the next episode from a reset, with the LSTM state at its initial value. A termination's
    discount is 0, a time limit's 1. Returns
    train(key) -> episode_return [iterations, rows_per_iteration, E], NaN unless an episode ended there."""
    import gymnax

    from acmelike.types import Step

    env, params = gymnax.make(environment)
    unlimited = params.replace(max_steps_in_episode=np.iinfo(np.int32).max)  # done without it: terminated
    reset = jax.vmap(env.reset_env, in_axes=(0, None))
    step = jax.vmap(env.step_env, in_axes=(0, 0, 0, None))
    is_terminal = jax.vmap(env.is_terminal, in_axes=(0, None))

    def train(key):
        key, learner_key, reset_key = jax.random.split(key, 3)
        learner, initial_lstm = init_learner(learner_key)
        obs, env_state = reset(jax.random.split(reset_key, NUM_ENVS), params)
        start, padding = jnp.ones(NUM_ENVS, bool), jnp.zeros(NUM_ENVS, bool)

        def write_row(carry, key):
            learner, env_state, obs, start, padding, lstm, running = carry
            act_key, step_key, reset_key = jax.random.split(key, 3)
            real = jnp.logical_not(padding)
            action, next_lstm, extras, acted = act(learner, obs, lstm, act_key, real)
            next_obs, next_state, reward, done, _ = step(jax.random.split(step_key, NUM_ENVS), env_state, action,
                                                         params)
            reward = jnp.where(real, reward, 0.0)
            row = Step(observation=obs, action=jnp.where(real, action, 0), reward=reward,
                       discount=jnp.where(real, 1.0 - (done & is_terminal(next_state, unlimited)), 0.0),
                       start_of_episode=start,
                       extras=_where(real, extras, jax.tree_util.tree_map(jnp.zeros_like, extras)))
            total = running + reward
            ended = jnp.where(real & done, total, jnp.nan)
            reset_obs, reset_state = reset(jax.random.split(reset_key, NUM_ENVS), params)
            carry = (acted, _where(real, next_state, reset_state), _where(real, next_obs, reset_obs), padding,
                     real & done, _where(real, next_lstm, initial_lstm), jnp.where(real & done, 0.0, total))
            return carry, (row, ended)

        def iteration(carry, key):
            row_key, learn_key = jax.random.split(key)
            carry, (rows, ended) = jax.lax.scan(write_row, carry, jax.random.split(row_key, rows_per_iteration))
            learner, _, obs, start = carry[:4]
            rows = jax.tree_util.tree_map(lambda x: jnp.swapaxes(x, 0, 1), rows)  # [E, T]
            zeros = jax.tree_util.tree_map(lambda x: jnp.zeros_like(x[:, 0]), rows)
            next_row = zeros._replace(observation=obs, start_of_episode=start)
            return (learn(learner, rows, next_row, learn_key),) + carry[1:], ended

        lstm = initial_lstm
        carry = (learner, env_state, obs, start, padding, lstm, jnp.zeros(NUM_ENVS))
        return jax.lax.scan(iteration, carry, jax.random.split(key, iterations))[1]

    return train


def _spec():
    """MemoryChain's EnvironmentSpec, as the agents' `make_networks` take it."""
    from acmelike.anakin import make_gymnax_environment

    return make_gymnax_environment(f"gymnax/{ENVIRONMENT}").spec


def impala_baseline(iterations: int, config):
    """A bare jitted IMPALA: categorical actions from the agent's LSTM network, the batch the rows just written
    plus the bootstrap row, one V-trace SGD step (the agent's `update_step`) per iteration."""
    from acmelike.types import ReplaySample, SampleInfo
    from agents.impala import learning
    from agents.impala.networks import make_networks

    networks = make_networks(_spec(), config)
    network, update_step = networks.network, learning.make_update_step(networks, config)
    info = SampleInfo(key=jnp.zeros(NUM_ENVS, jnp.int32), probability=jnp.full(NUM_ENVS, 1.0 / NUM_ENVS),
                      table_size=jnp.full(NUM_ENVS, float(NUM_ENVS)))

    def init_learner(key):
        return learning.init_training_state(networks, config, key), network.initial_state(NUM_ENVS)

    def act(state, obs, lstm, key, _):
        (logits, _), next_lstm = network.apply(state.params, obs, lstm)
        action = jax.random.categorical(key, logits).astype(jnp.int32)
        return action, next_lstm, {"core_state": lstm, "logits": logits}, state

    def learn(state, rows, next_row, _):
        data = jax.tree_util.tree_map(lambda r, b: jnp.concatenate([r, b[:, None]], axis=1), rows, next_row)
        return update_step(state, ReplaySample(info=info, data=data))[0]

    return bare_loop(iterations, config.unroll_length, init_learner, act, learn)


def r2d2_baseline(iterations: int, config):
    """A bare jitted R2D2: epsilon-greedy actors (an Ape-X epsilon and a parameter copy fetched every
    `variable_update_period` actions per environment), a flat ring of whole sequences with priorities, one SGD step
    (the agent's `update_step`, burn-in included) per iteration once `min_replay_size` sequences are held."""
    from acmelike.types import ReplaySample, SampleInfo, Step
    from agents.r2d2 import learning
    from agents.r2d2.networks import make_networks

    spec = _spec()
    networks = make_networks(spec, config)
    network, update_step = networks.network, learning.make_update_step(networks, config)
    length, period, capacity = config.sequence_length, config.sequence_period, config.max_replay_size
    # The newest whole sequence of an environment starts `window` rows before its newest row.
    window = -(-length // period) * period
    assert config.batch_size / config.samples_per_insert == NUM_ENVS, "one SGD step per sequence of each env"
    exponents = 1.0 + config.epsilon_alpha * jnp.arange(config.num_epsilons) / max(config.num_epsilons - 1, 1)
    epsilons = jnp.float32(config.epsilon) ** exponents

    def init_learner(key):
        learner_key, epsilon_key = jax.random.split(key)
        state = learning.init_training_state(networks, config, learner_key)
        actors = (jax.tree_util.tree_map(lambda x: jnp.zeros((NUM_ENVS,) + x.shape, x.dtype), state.params),
                  jnp.zeros(NUM_ENVS, jnp.int32), jax.random.choice(epsilon_key, epsilons, (NUM_ENVS,)))
        example = jax.eval_shape(lambda: network.initial_state(1))
        row = dict(observation=jnp.zeros(spec.observations.shape), action=jnp.zeros((), jnp.int32),
                   reward=jnp.zeros(()), discount=jnp.zeros(()), start_of_episode=jnp.zeros((), bool),
                   core_state=jax.tree_util.tree_map(lambda x: jnp.zeros(x.shape[1:], x.dtype), example))
        ring = jax.tree_util.tree_map(lambda x: jnp.zeros((capacity, length) + x.shape, x.dtype), row)
        recent = jax.tree_util.tree_map(lambda x: jnp.zeros((NUM_ENVS, window - period) + x.shape, x.dtype), row)
        replay = (ring, jnp.ones(capacity), recent, jnp.zeros((), jnp.int32), jnp.zeros((), jnp.int32))
        return (state, actors, replay), network.initial_state(NUM_ENVS)

    def act(learner, obs, lstm, key, real):
        state, (copies, actions, epsilon), replay = learner
        fetch = real & (actions % config.variable_update_period == 0)
        copies = _where(fetch, jax.tree_util.tree_map(lambda x: jnp.broadcast_to(x, (NUM_ENVS,) + x.shape),
                                                      state.params), copies)
        q, next_lstm = jax.vmap(lambda p, o, s: network.apply(p, o[None], jax.tree_util.tree_map(
            lambda x: x[None], s)))(copies, obs, lstm)
        q, next_lstm = q[:, 0], jax.tree_util.tree_map(lambda x: x[:, 0], next_lstm)
        explore_key, action_key = jax.random.split(key)
        random_action = jax.random.randint(action_key, (NUM_ENVS,), 0, networks.num_actions)
        explore = jax.random.uniform(explore_key, (NUM_ENVS,)) < epsilon
        action = jnp.where(explore, random_action, jnp.argmax(q, -1)).astype(jnp.int32)
        learner = (state, (copies, actions + real.astype(jnp.int32), epsilon), replay)
        return action, next_lstm, {"core_state": lstm}, learner

    def learn(learner, rows, _, key):
        state, actors, (ring, priorities, recent, rows_written, inserted) = learner
        rows = dict(observation=rows.observation, action=rows.action, reward=rows.reward, discount=rows.discount,
                    start_of_episode=rows.start_of_episode, core_state=rows.extras["core_state"])
        newest = jax.tree_util.tree_map(lambda r, n: jnp.concatenate([r, n], axis=1), recent, rows)  # [E, window]
        rows_written = rows_written + period
        whole = rows_written >= window  # the newest sequence, window rows back, starts at row >= 0
        slots = jnp.where(whole, (inserted + jnp.arange(NUM_ENVS)) % capacity, capacity)  # capacity: dropped
        ring = jax.tree_util.tree_map(lambda stored, new: stored.at[slots].set(new[:, :length], mode="drop"), ring,
                                      newest)
        priorities = priorities.at[slots].set(1.0, mode="drop")
        inserted = inserted + NUM_ENVS * whole.astype(jnp.int32)
        recent = jax.tree_util.tree_map(lambda x: x[:, period:], newest)
        size = jnp.minimum(inserted, capacity)

        def sgd_step(state):
            held = jnp.arange(capacity) < size
            weights = jnp.where(held, priorities ** config.priority_exponent, 0.0)
            indices = jax.random.choice(key, capacity, (config.batch_size,), p=weights / jnp.sum(weights))
            batch = jax.tree_util.tree_map(lambda x: x[indices], ring)
            data = Step(observation=batch["observation"], action=batch["action"], reward=batch["reward"],
                        discount=batch["discount"], start_of_episode=batch["start_of_episode"],
                        extras={"core_state": batch["core_state"]})
            info = SampleInfo(key=indices.astype(jnp.int32), probability=weights[indices] / jnp.sum(weights),
                              table_size=jnp.full(config.batch_size, size, jnp.float32))
            state, _, extras = update_step(state, ReplaySample(info=info, data=data))
            return state, priorities.at[indices].set(extras["priorities"])

        state, priorities = jax.lax.cond(size >= config.min_replay_size, sgd_step,
                                         lambda state: (state, priorities), state)
        return state, actors, (ring, priorities, recent, rows_written, inserted)

    return bare_loop(iterations, period, init_learner, act, learn)


def _our_config(name: str):
    if name == "impala":
        from agents.impala import IMPALAConfig

        return IMPALAConfig()
    from agents.r2d2 import R2D2Config

    return R2D2Config()


BASELINES = {"impala": impala_baseline, "r2d2": r2d2_baseline}


def compare(name: str, quick: bool, out=None, repeats: Optional[int] = None) -> None:
    """Our Anakin form of agent `name` (its default config) against its bare loop, side by side
    (`anakin_off_policy.side_by_side`): prints the rows, writes `anakin_<name>.json`."""
    repeats, total_steps = (repeats or 2, 8_000) if quick else (repeats or 3, 40_000)
    config = _our_config(name)

    import launch  # noqa: F401  (import order: JAX substrate before anything else)
    from launch.engines.anakin import AnakinConfig, make_agent

    agent = make_agent(AnakinConfig(agent=name, environment=f"gymnax/{ENVIRONMENT}", max_num_actor_steps=total_steps,
                                    agent_config=config))
    assert agent.num_envs == NUM_ENVS, (agent.num_envs, NUM_ENVS)
    iterations = total_steps // agent.rows_per_iteration
    side_by_side(
        name, agent, BASELINES[name](iterations, config), total_steps, repeats, quick, out,
        run_note=f"{iterations} iterations of {NUM_ENVS}x{agent.rows_per_env} rows, one jitted call",
        return_note="informative: +1 names the context bit, -1 does not; a memoryless policy averages 0",
        config=dict(agent=name, environment=ENVIRONMENT, num_envs=NUM_ENVS, rows_per_env=agent.rows_per_env,
                    total_steps=total_steps, agent_config="defaults"))


def main() -> None:
    args = side_by_side_arguments(__doc__, "8k environment steps and 2 repeats, not 40k and 3", agents=BASELINES)
    for name in args.agent:
        print(f"-- {name}", flush=True)
        compare(name, args.quick, args.out, args.repeats)


if __name__ == "__main__":
    main()
