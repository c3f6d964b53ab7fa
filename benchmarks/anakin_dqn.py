"""Anakin DQN on gymnax CartPole-v1 against a bare jitted DQN of the same configuration written here: compile time
and run time apart, side by side in one run, and the return reached.

Both sides, DQN's default config (`DQNConfig()`): 4 environments writing 8 steps each per iteration, 8 SGD steps
of 64 3-step transitions per iteration (16 samples per insert), learning once 1,000 transitions are held, a
prioritized replay of 100k transitions (alpha 0.6, new transitions at priority 1.0, each SGD step's |TD errors|
written back before the next samples; importance weights to the 0.4, normalised by their max), a ReLU MLP
128x128, the double-Q loss with a Huber threshold of 1 on n-step targets (gamma 0.99, cut at the episode's end;
a time-limit truncation bootstraps, a termination does not), gradients clipped to norm 10, Adam 1e-3, the target
network copied every 100 SGD steps; epsilon-greedy actors (1.0 to 0.01 over each environment's first 10k steps)
acting with a copy of the parameters fetched every 10 steps.
Ours runs DQN's own `update_step` through `launch.engines.anakin` (what `--launch anakin --agent dqn` runs:
`agents/dqn/anakin.py`, `acmelike.anakin.off_policy`). The baseline is one plain function (`make_baseline`):
gymnax's `step_env` with a reset where the episode ended, a time-major ring of steps, the n-step transitions and
the loss written inline. One jitted call of all iterations on each side.

Both sides run alternately (`repeats` times, seed = repeat index); run time is the median over repeats, compile
time the median of at least 5 ahead-of-time lower + compiles per side (`anakin_ppo.COMPILE_REPEATS`), alternating
too. The return is each run's last-20-episode mean.

    python benchmarks/anakin_dqn.py [--quick] [--repeats N] [--out benchmarks/results]

The record goes to `anakin_dqn.json`.
"""

import functools
import os
import sys
from typing import Optional

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

from benchmarks.anakin_off_policy import side_by_side, side_by_side_arguments  # noqa: E402

ENVIRONMENT, NUM_ENVS = "CartPole-v1", 4


def make_baseline(iterations: int, config):
    """A bare jitted DQN (own code) of `config`: train(key) -> episode_return [iterations, rows, NUM_ENVS], NaN
    unless an episode ended there, to be jitted."""
    import flax.linen as nn
    import gymnax
    import optax

    env, params = gymnax.make(ENVIRONMENT)
    # Without the time limit, `done` is termination only: a truncated episode bootstraps (discount 1).
    unlimited = params.replace(max_steps_in_episode=np.iinfo(np.int32).max)
    obs_size, num_actions = env.observation_space(params).shape[0], env.action_space(params).n
    n, gamma, batch = config.n_step, config.discount, config.batch_size
    rows = round(config.num_sgd_steps_per_step * batch / config.samples_per_insert) // NUM_ENVS
    capacity = max(config.max_replay_size // NUM_ENVS, n + rows)  # steps kept per environment
    min_steps = -(-config.min_replay_size // NUM_ENVS)

    class QNetwork(nn.Module):
        @nn.compact
        def __call__(self, x):
            for size in config.hidden_sizes:
                x = nn.relu(nn.Dense(size)(x))
            return nn.Dense(num_actions)(x)

    network = QNetwork()
    optimizer = optax.chain(optax.clip_by_global_norm(config.max_gradient_norm), optax.adam(config.learning_rate))
    epsilon = optax.linear_schedule(config.epsilon_init, config.epsilon_final, config.epsilon_decay_steps)
    reset = jax.vmap(env.reset_env, in_axes=(0, None))
    step = jax.vmap(env.step_env, in_axes=(0, 0, 0, None))
    is_terminal = jax.vmap(env.is_terminal, in_axes=(0, None))

    def sample(replay, priorities, written, key):
        """`batch` n-step transitions drawn in proportion to `priorities` (each priority ** alpha, raised when
        written) among those whose n steps are held: (obs, action, reward, discount, next_obs), probabilities,
        flat indices."""
        obs, action, reward, discount, last, next_obs = replay
        size = jnp.minimum(written, capacity)
        age = (jnp.arange(capacity) - jnp.where(written > capacity, written % capacity, 0)) % capacity
        held = (age < size - n + 1)[:, None]
        weights = jnp.where(held, priorities, 0.0).reshape(-1)
        # Inverse-CDF draws (jax.random.choice with p draws Gumbel noise for every held transition instead).
        cumulative = jnp.cumsum(weights)
        points = jax.random.uniform(key, (batch,), maxval=cumulative[-1])
        drawn = jnp.minimum(jnp.searchsorted(cumulative, points, side="right"), weights.size - 1)
        # As acmelike.anakin.off_policy.sample_in_proportion: float32 cumsum is not monotone, so a draw can land on
        # a weight of 0 (probability 0, an infinite importance weight); it repeats the batch's first valid draw.
        valid = weights[drawn] > 0
        flat = jnp.where(valid, drawn, drawn[jnp.argmax(valid)])
        times, envs = flat // NUM_ENVS, flat % NUM_ENVS
        total, to_next, alive = jnp.zeros(batch), jnp.ones(batch), jnp.ones(batch, bool)
        bootstrap = next_obs[times, envs]
        for k in range(n):  # the rewards up to the episode's last step, discounted; bootstrap after the last of them
            t = (times + k) % capacity
            total = total + jnp.where(alive, to_next * reward[t, envs], 0.0)
            bootstrap = jnp.where(alive[:, None], next_obs[t, envs], bootstrap)
            to_next = jnp.where(alive, to_next * gamma * discount[t, envs], to_next)
            alive = alive & ~last[t, envs]
        return (obs[times, envs], action[times, envs], total, to_next, bootstrap), weights[flat] / cumulative[-1], flat

    def loss(online, target, transitions, probability):
        obs, action, reward, discount, next_obs = transitions
        q = jnp.take_along_axis(network.apply(online, obs), action[:, None], -1)[:, 0]
        best = jnp.argmax(network.apply(online, next_obs), -1)
        next_q = jnp.take_along_axis(network.apply(target, next_obs), best[:, None], -1)[:, 0]
        td = jax.lax.stop_gradient(reward + discount * next_q) - q
        huber = jnp.where(jnp.abs(td) <= 1.0, 0.5 * td ** 2, jnp.abs(td) - 0.5)
        weights = (1.0 / probability) ** config.importance_sampling_exponent
        return jnp.mean(weights / jnp.max(weights) * huber), td

    def sgd_step(replay, written, carry, key):
        (online, target, opt_state, updates_done), priorities = carry
        transitions, probability, flat = sample(replay, priorities, written, key)
        grads, td = jax.grad(loss, has_aux=True)(online, target, transitions, probability)
        updates, opt_state = optimizer.update(grads, opt_state, online)
        online = optax.apply_updates(online, updates)
        updates_done = updates_done + 1
        copy = updates_done % config.target_update_period == 0
        target = jax.tree_util.tree_map(lambda o, t: jnp.where(copy, o, t), online, target)
        priorities = priorities.at[flat // NUM_ENVS, flat % NUM_ENVS].set(jnp.abs(td) ** config.priority_exponent)
        return ((online, target, opt_state, updates_done), priorities), None

    def train(key):
        key, init_key, reset_key = jax.random.split(key, 3)
        online = network.init(init_key, jnp.zeros((1, obs_size)))
        learner = (online, online, optimizer.init(online), jnp.zeros((), jnp.int32))
        obs, env_state = reset(jax.random.split(reset_key, NUM_ENVS), params)
        replay = (jnp.zeros((capacity, NUM_ENVS, obs_size)), jnp.zeros((capacity, NUM_ENVS), jnp.int32),
                  jnp.zeros((capacity, NUM_ENVS)), jnp.zeros((capacity, NUM_ENVS)),
                  jnp.zeros((capacity, NUM_ENVS), bool), jnp.zeros((capacity, NUM_ENVS, obs_size)))
        priorities = jnp.ones((capacity, NUM_ENVS))

        def act_and_write(carry, key):
            learner, acting, env_state, obs, running, replay, priorities, written = carry
            act_key, step_key, reset_key = jax.random.split(key, 3)
            acting = jax.tree_util.tree_map(lambda new, old: jnp.where(written % config.variable_update_period == 0,
                                                                       new, old), learner[0], acting)
            explore_u, action_u = jax.random.uniform(act_key, (2, NUM_ENVS))
            greedy = jnp.argmax(network.apply(acting, obs), -1)
            random_action = jnp.minimum((action_u * num_actions).astype(jnp.int32), num_actions - 1)
            action = jnp.where(explore_u < epsilon(written), random_action, greedy).astype(jnp.int32)
            next_obs, next_state, reward, done, _ = step(jax.random.split(step_key, NUM_ENVS), env_state, action,
                                                         params)
            terminated = done & is_terminal(next_state, unlimited)
            at = written % capacity
            replay = tuple(stored.at[at].set(new) for stored, new in zip(
                replay, (obs, action, reward, 1.0 - terminated, done, next_obs)))
            total = running + reward
            reset_obs, reset_state = reset(jax.random.split(reset_key, NUM_ENVS), params)
            env_state = jax.tree_util.tree_map(
                lambda r, s: jnp.where(jnp.reshape(done, done.shape + (1,) * (s.ndim - 1)), r, s),
                reset_state, next_state)
            carry = (learner, acting, env_state, jnp.where(done[:, None], reset_obs, next_obs),
                     jnp.where(done, 0.0, total), replay, priorities.at[at].set(1.0), written + 1)
            return carry, jnp.where(done, total, jnp.nan)

        def iteration(carry, key):
            row_key, learn_key = jax.random.split(key)
            carry, ended = jax.lax.scan(act_and_write, carry, jax.random.split(row_key, rows))
            learner, acting, env_state, obs, running, replay, priorities, written = carry

            def learn(state):
                return jax.lax.scan(functools.partial(sgd_step, replay, written), state,
                                    jax.random.split(learn_key, config.num_sgd_steps_per_step))[0]

            learner, priorities = jax.lax.cond(written >= min_steps, learn, lambda state: state,
                                               (learner, priorities))
            return (learner, acting, env_state, obs, running, replay, priorities, written), ended

        carry = (learner, online, env_state, obs, jnp.zeros(NUM_ENVS), replay, priorities,
                 jnp.zeros((), jnp.int32))
        return jax.lax.scan(iteration, carry, jax.random.split(key, iterations))[1]

    return train


def compare(quick: bool, out=None, repeats: Optional[int] = None) -> None:
    """Our Anakin DQN (its default config) against `make_baseline`, side by side
    (`anakin_off_policy.side_by_side`): prints the rows, writes `anakin_dqn.json`."""
    from agents.dqn import DQNConfig

    repeats, total_steps = (repeats or 2, 20_000) if quick else (repeats or 3, 100_000)
    config = DQNConfig()

    import launch  # noqa: F401  (import order: JAX substrate before anything else)
    from launch.engines.anakin import AnakinConfig, make_agent

    agent = make_agent(AnakinConfig(agent="dqn", environment=f"gymnax/{ENVIRONMENT}", max_num_actor_steps=total_steps,
                                    agent_config=config))
    assert agent.num_envs == NUM_ENVS, (agent.num_envs, NUM_ENVS)
    iterations = total_steps // agent.rows_per_iteration
    side_by_side(
        "dqn", agent, make_baseline(iterations, config), total_steps, repeats, quick, out,
        run_note=f"{iterations} iterations of {NUM_ENVS}x{agent.rows_per_env} steps + "
                 f"{config.num_sgd_steps_per_step} SGD steps of {config.batch_size}, one jitted call",
        return_note="informative: CartPole's best is 500; quick runs are still learning",
        config=dict(agent="dqn", environment=ENVIRONMENT, num_envs=NUM_ENVS, rows_per_env=agent.rows_per_env,
                    total_steps=total_steps, agent_config="defaults"))


def main() -> None:
    args = side_by_side_arguments(__doc__, "20k environment steps and 2 repeats, not 100k and 3")
    compare(args.quick, args.out, args.repeats)


if __name__ == "__main__":
    main()
