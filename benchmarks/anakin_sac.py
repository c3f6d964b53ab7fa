"""Anakin SAC on gymnax Pendulum-v1: compile time and run time apart, and the return reached, against a bare jitted
SAC loop of the same configuration written here (the baseline, measured in this run).

Both sides: 8 environments stepping once per iteration, 8 SGD steps of 256 uniformly sampled transitions per
iteration (one SGD step per environment step), learning once 1,000 transitions are held; SAC's default networks
(ReLU MLPs 256x256: a tanh-squashed Gaussian policy with a softly bounded log std, twin critics), losses and
optimisers (Adam 1e-3 each, tau 0.005, gamma 0.99, temperature tuned toward -1 nat). Ours runs SAC's own
`update_step` through `launch.engines.anakin` (the code `--launch anakin --agent sac` runs: `agents/sac/anakin.py`,
`acmelike.anakin.off_policy`); the baseline is one plain function: a flat replay ring of 1-step transitions,
gymnax's `step_env` with a reset where the episode ended, the same losses written inline. One jitted call of all
iterations on each side.

Both sides run alternately (`repeats` times, seed = repeat index); run time is the median over repeats, compile
time is measured once per side (ahead-of-time lower + compile). The return is each run's last-20-episode mean.

    python benchmarks/anakin_sac.py [--quick] [--out benchmarks/results]
"""

import argparse
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

from benchmarks.anakin_ppo import Clock, alternate_pairs, compile_side_by_side, last_20_mean, seed_keys  # noqa: E402
from benchmarks.common import finish, header, print_rows, result_row, write_json  # noqa: E402

NUM_ENVS, SGD_STEPS, BATCH, MIN_REPLAY, MAX_REPLAY = 8, 8, 256, 1_000, 1_000_000
LR, GAMMA, TAU, HIDDEN = 1e-3, 0.99, 0.005, (256, 256)


def make_baseline(iterations: int):
    """A bare jitted SAC (own code): returns train(key) -> episode_return [iterations, NUM_ENVS], NaN unless an
    episode ended there, to be jitted."""
    import flax.linen as nn
    import gymnax
    import optax

    env, params = gymnax.make("Pendulum-v1")
    obs_size = env.observation_space(params).shape[0]
    action_size = env.action_space(params).shape[0]
    scale = float(env.action_space(params).high)  # Pendulum's bounds are symmetric: [-2, 2]
    target_entropy = -float(action_size)

    class Policy(nn.Module):
        @nn.compact
        def __call__(self, x):
            for size in HIDDEN:
                x = nn.relu(nn.Dense(size)(x))
            mean, raw = nn.Dense(action_size)(x), nn.Dense(action_size)(x)
            return mean, -5.0 + 3.5 * (jnp.tanh(raw) + 1.0)

    class Critic(nn.Module):
        @nn.compact
        def __call__(self, obs, action):
            x = jnp.concatenate([obs, action], -1)
            for size in HIDDEN:
                x = nn.relu(nn.Dense(size)(x))
            return nn.Dense(1)(x)[..., 0]

    policy = Policy()
    critics = nn.vmap(Critic, variable_axes={"params": 0}, split_rngs={"params": True}, in_axes=None, out_axes=0,
                      axis_size=2)()
    adam = optax.adam(LR)

    def sample_action(policy_params, obs, key):
        mean, log_std = policy.apply(policy_params, obs)
        noise = jax.random.normal(key, mean.shape)
        u = mean + jnp.exp(log_std) * noise
        log_prob = (-0.5 * noise**2 - log_std - 0.5 * jnp.log(2 * jnp.pi)
                    - 2 * (jnp.log(2.0) - u - jax.nn.softplus(-2 * u)))
        return jnp.tanh(u), jnp.sum(log_prob, -1)

    def sgd_step(learner, batch_key):
        policy_params, critic_params, target_params, log_alpha, opt_states = learner
        batch, key = batch_key
        obs, action, reward, next_obs = batch
        key, next_key, policy_key = jax.random.split(key, 3)
        alpha = jnp.exp(log_alpha)

        def critic_loss(critic_params):
            next_action, next_log_prob = sample_action(policy_params, next_obs, next_key)
            next_q = jnp.min(critics.apply(target_params, next_obs, next_action), 0) - alpha * next_log_prob
            target = jax.lax.stop_gradient(reward + GAMMA * next_q)
            return jnp.sum(jnp.mean(0.5 * (critics.apply(critic_params, obs, action) - target) ** 2, -1))

        grads = jax.grad(critic_loss)(critic_params)
        updates, critic_opt = adam.update(grads, opt_states[1])
        critic_params = optax.apply_updates(critic_params, updates)

        def policy_loss(policy_params):
            new_action, log_prob = sample_action(policy_params, obs, policy_key)
            q = jnp.min(critics.apply(critic_params, obs, new_action), 0)
            return jnp.mean(alpha * log_prob - q), log_prob

        grads, log_prob = jax.grad(policy_loss, has_aux=True)(policy_params)
        updates, policy_opt = adam.update(grads, opt_states[0])
        policy_params = optax.apply_updates(policy_params, updates)
        alpha_grad = jax.grad(lambda la: -la * jnp.mean(jax.lax.stop_gradient(log_prob) + target_entropy))(log_alpha)
        update, alpha_opt = adam.update(alpha_grad, opt_states[2])
        log_alpha = optax.apply_updates(log_alpha, update)
        target_params = optax.incremental_update(critic_params, target_params, TAU)
        return (policy_params, critic_params, target_params, log_alpha, (policy_opt, critic_opt, alpha_opt)), None

    def train(key):
        key, policy_key, critic_key, reset_key = jax.random.split(key, 4)
        policy_params = policy.init(policy_key, jnp.zeros((1, obs_size)))
        critic_params = critics.init(critic_key, jnp.zeros((1, obs_size)), jnp.zeros((1, action_size)))
        log_alpha = jnp.zeros(())
        learner = (policy_params, critic_params, critic_params, log_alpha,
                   (adam.init(policy_params), adam.init(critic_params), adam.init(log_alpha)))
        reset = jax.vmap(env.reset_env, in_axes=(0, None))
        obs, env_state = reset(jax.random.split(reset_key, NUM_ENVS), params)
        replay = (jnp.zeros((MAX_REPLAY, obs_size)), jnp.zeros((MAX_REPLAY, action_size)), jnp.zeros(MAX_REPLAY),
                  jnp.zeros((MAX_REPLAY, obs_size)))

        def iteration(carry, _):
            learner, env_state, obs, running, replay, size, key = carry
            key, act_key, step_key, reset_key, sample_key, sgd_key = jax.random.split(key, 6)
            action, _ = sample_action(learner[0], obs, act_key)
            next_obs, env_state_next, reward, done, _ = jax.vmap(env.step_env, in_axes=(0, 0, 0, None))(
                jax.random.split(step_key, NUM_ENVS), env_state, scale * action, params)
            positions = (size + jnp.arange(NUM_ENVS)) % MAX_REPLAY
            replay = tuple(stored.at[positions].set(new)
                           for stored, new in zip(replay, (obs, action, reward, next_obs)))
            size = size + NUM_ENVS
            total = running + reward
            ended = jnp.where(done, total, jnp.nan)
            reset_obs, reset_state = reset(jax.random.split(reset_key, NUM_ENVS), params)
            env_state = jax.tree_util.tree_map(
                lambda r, s: jnp.where(jnp.reshape(done, done.shape + (1,) * (s.ndim - 1)), r, s),
                reset_state, env_state_next)
            obs = jnp.where(done[:, None], reset_obs, next_obs)
            indices = jax.random.randint(sample_key, (SGD_STEPS, BATCH), 0, jnp.minimum(size, MAX_REPLAY))
            batches = tuple(stored[indices] for stored in replay)

            def learn(learner):
                return jax.lax.scan(sgd_step, learner, (batches, jax.random.split(sgd_key, SGD_STEPS)))[0]

            learner = jax.lax.cond(size >= MIN_REPLAY, learn, lambda learner: learner, learner)
            return (learner, env_state, obs, jnp.where(done, 0.0, total), replay, size, key), ended

        carry = (learner, env_state, obs, jnp.zeros(NUM_ENVS), replay, jnp.zeros((), jnp.int32), key)
        return jax.lax.scan(iteration, carry, None, iterations)[1]

    return train


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="4k environment steps and 2 repeats, not 20k and 3")
    parser.add_argument("--out", default=None, help="results directory (default benchmarks/results)")
    args = parser.parse_args()
    repeats, total_steps = (2, 4_000) if args.quick else (3, 20_000)
    iterations = total_steps // NUM_ENVS
    payload = header("anakin_sac", quick=args.quick, seeds=list(range(repeats)),
                     packages=["jax", "jaxlib", "flax", "optax", "gymnax", "numpy"])

    import launch  # noqa: F401  (import order: JAX substrate before anything else)
    from agents.sac import SACConfig
    from launch.engines.anakin import AnakinConfig, make_agent

    config = SACConfig(batch_size=BATCH, num_sgd_steps_per_step=SGD_STEPS, samples_per_insert=float(BATCH),
                       min_replay_size=MIN_REPLAY, max_replay_size=MAX_REPLAY, policy_hidden_sizes=HIDDEN,
                       critic_hidden_sizes=HIDDEN, policy_learning_rate=LR, critic_learning_rate=LR,
                       temperature_learning_rate=LR, discount=GAMMA, tau=TAU)
    agent = make_agent(AnakinConfig(agent="sac", environment="gymnax/Pendulum-v1", max_num_actor_steps=total_steps,
                                    agent_config=config))
    assert agent.num_envs == NUM_ENVS and agent.rows_per_env == 1

    init, chunk, baseline, ours_compile, baseline_compile = compile_side_by_side(
        agent, iterations, make_baseline(iterations))

    def run_ours(seed):
        carries = init(seed_keys(seed))
        jax.block_until_ready(carries)
        clock = Clock()
        _, outputs = chunk(carries, iterations)
        episode_return = jax.device_get(outputs.episode_return[0])
        return clock.read(), last_20_mean(episode_return), None

    def run_baseline(seed):
        clock = Clock()
        episode_return = jax.device_get(baseline(jax.random.PRNGKey(seed)))
        return clock.read(), last_20_mean(episode_return), None

    runs = alternate_pairs(repeats, run_ours, run_baseline)

    def median(side, field):
        return statistics.median(r[field] for r in runs[side])

    ratio_per_seed = [o["seconds"] / b["seconds"] for o, b in zip(runs["ours"], runs["baseline"])]
    labels = dict(ours_label="launch.engines.anakin SAC", baseline_label="bare jitted SAC")
    rows = [
        result_row("anakin_sac_run_time", median("ours", "seconds"), median("baseline", "seconds"),
                   f"s per {total_steps // 1000}k steps", 1.0, ratio=statistics.median(ratio_per_seed),
                   lower_is_better=True, **labels,
                   note=f"{iterations} iterations of {NUM_ENVS} steps + {SGD_STEPS} SGD steps of {BATCH}, one jitted "
                   f"call; ratio: median of {repeats} same-seed pairs"),
        result_row("anakin_sac_run_cpu_time", median("ours", "cpu_seconds"), median("baseline", "cpu_seconds"),
                   f"CPU s per {total_steps // 1000}k steps", 1.0, lower_is_better=True, **labels,
                   note="process CPU time (all threads): robust to a busy machine"),
        result_row("anakin_sac_compile_time", ours_compile[0], baseline_compile[0], "s", 1.0, lower_is_better=True,
                   **labels, note=f"ahead-of-time lower + compile, once per side; CPU s {ours_compile[1]:.1f} vs "
                   f"{baseline_compile[1]:.1f}"),
        result_row("anakin_sac_return", median("ours", "return_last_20"), median("baseline", "return_last_20"),
                   "return (last 20 episodes, median over seeds)", None, **labels,
                   note="informative: Pendulum returns are negative, and short quick runs are still learning"),
    ]
    print_rows(rows)
    payload.update(
        rows=rows, runs=runs,
        compile_seconds={"ours": round(ours_compile[0], 2), "baseline": round(baseline_compile[0], 2)},
        compile_cpu_seconds={"ours": round(ours_compile[1], 2), "baseline": round(baseline_compile[1], 2)},
        config=dict(num_envs=NUM_ENVS, sgd_steps_per_iteration=SGD_STEPS, batch_size=BATCH, total_steps=total_steps,
                    min_replay_size=MIN_REPLAY, max_replay_size=MAX_REPLAY, hidden_sizes=list(HIDDEN)),
    )
    path = write_json("anakin_sac", finish(payload), **({"results_dir": args.out} if args.out else {}))
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
