"""Anakin PPO on gymnax CartPole-v1, 500k steps: compile time and run time apart, and the return reached, against
a PureJaxRL-style single-file PPO of the same configuration written here (the baseline, measured in this run).

PureJaxRL's CartPole configuration (purejaxrl/ppo.py): 4 environments x 128 steps per update, 5e5 steps, 4 epochs
of 4 minibatches, Adam 2.5e-4 (linearly annealed) eps 1e-5, gamma 0.99, GAE lambda 0.95, clip 0.2, entropy 0.01,
value 0.5 (clipped value loss), gradient norm 0.5, tanh MLPs 64x64. Ours runs the PPO agent's own update step
with the same numbers where PPOConfig has them (no annealing, no value clipping: the agent has neither), through
`launch.engines.anakin` (the code `--launch anakin` runs): one jitted call of all 976 updates on each side.

Both sides run alternately (`repeats` times, seed = repeat index); run time is the median over repeats, compile
time the median of at least 5 ahead-of-time lower + compiles per side (`anakin_ppo.COMPILE_REPEATS`), alternating
too. The return is each run's last-20-episode mean.

    python benchmarks/anakin_ppo.py [--quick] [--repeats N] [--out benchmarks/results]
"""

import argparse
import os
import statistics
import sys
import time
from typing import Optional

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

from benchmarks.common import CompileMeter, finish, header, print_rows, result_row, write_json  # noqa: E402

NUM_ENVS, NUM_STEPS, TOTAL_STEPS = 4, 128, 500_000
EPOCHS, MINIBATCHES = 4, 4
LR, GAMMA, GAE_LAMBDA, CLIP, ENT, VF, MAX_GRAD_NORM = 2.5e-4, 0.99, 0.95, 0.2, 0.01, 0.5, 0.5
NUM_UPDATES = TOTAL_STEPS // NUM_STEPS // NUM_ENVS


def baseline_actor_critic(num_actions: int):
    """The baselines' network (PureJaxRL's): separate tanh MLPs 64x64 for logits and value, orthogonal init."""
    import flax.linen as nn

    class ActorCritic(nn.Module):
        @nn.compact
        def __call__(self, x):
            def mlp(out, scale):
                h = x
                for _ in range(2):
                    h = nn.tanh(nn.Dense(64, kernel_init=nn.initializers.orthogonal(np.sqrt(2)))(h))
                return nn.Dense(out, kernel_init=nn.initializers.orthogonal(scale))(h)

            return mlp(num_actions, 0.01), mlp(1, 1.0)[..., 0]

    return ActorCritic()


def baseline_gae(done, value, reward, last_value, gamma: float, gae_lambda: float):
    """The baselines' GAE over [T, B] arrays (`done` as float: 1 where the step ended the episode)."""

    def step(carry, inputs):
        advantage, next_value = carry
        done_t, value_t, reward_t = inputs
        delta = reward_t + gamma * next_value * (1 - done_t) - value_t
        advantage = delta + gamma * gae_lambda * (1 - done_t) * advantage
        return (advantage, value_t), advantage

    _, advantages = jax.lax.scan(step, (jnp.zeros_like(last_value), last_value), (done, value, reward),
                                 reverse=True, unroll=16)
    return advantages


def make_baseline(num_envs: int = NUM_ENVS, num_steps: int = NUM_STEPS, num_updates: int = NUM_UPDATES):
    """A PureJaxRL-style PPO (own code) of `num_updates` updates on `num_envs` x `num_steps` steps: returns
    train(key) -> (episode_return [U, T, B] NaN unless an episode ended there), to be jitted."""
    import gymnax
    import optax

    env, params = gymnax.make("CartPole-v1")
    num_actions = env.action_space(params).n

    network = baseline_actor_critic(num_actions)

    def schedule(count):
        return LR * (1.0 - (count // (MINIBATCHES * EPOCHS)) / num_updates)

    optimizer = optax.chain(optax.clip_by_global_norm(MAX_GRAD_NORM), optax.adam(schedule, eps=1e-5))

    def train(key):
        key, init_key, reset_key = jax.random.split(key, 3)
        net_params = network.init(init_key, jnp.zeros(env.observation_space(params).shape))
        opt_state = optimizer.init(net_params)
        obs, env_state = jax.vmap(env.reset, in_axes=(0, None))(jax.random.split(reset_key, num_envs), params)
        running = jnp.zeros(num_envs)

        def env_step(carry, _):
            net_params, env_state, obs, running, key = carry
            key, act_key, step_key = jax.random.split(key, 3)
            logits, value = network.apply(net_params, obs)
            action = jax.random.categorical(act_key, logits)
            log_prob = jnp.take_along_axis(jax.nn.log_softmax(logits), action[:, None], 1)[:, 0]
            obs_next, env_state, reward, done, _ = jax.vmap(env.step, in_axes=(0, 0, 0, None))(
                jax.random.split(step_key, num_envs), env_state, action, params
            )
            total = running + reward
            ended = jnp.where(done, total, jnp.nan)
            record = (obs, action, log_prob, value, reward, done.astype(jnp.float32))
            return (net_params, env_state, obs_next, jnp.where(done, 0.0, total), key), (record, ended)

        def update(carry, _):
            (net_params, opt_state), env_carry = carry[:2], carry[2:]
            env_carry, (batch, ended) = jax.lax.scan(env_step, (net_params,) + env_carry, None, num_steps)
            _, env_state, last_obs, running, key = env_carry
            obs, action, log_prob, value, reward, done = batch
            _, last_value = network.apply(net_params, last_obs)

            advantages = baseline_gae(done, value, reward, last_value, GAMMA, GAE_LAMBDA)
            targets = advantages + value
            data = (obs, action, log_prob, value, advantages, targets)

            def loss_fn(p, minibatch):
                obs, action, old_log_prob, old_value, advantage, target = minibatch
                logits, value = network.apply(p, obs)
                log_probs = jax.nn.log_softmax(logits)
                new_log_prob = jnp.take_along_axis(log_probs, action[:, None], 1)[:, 0]
                clipped_value = old_value + jnp.clip(value - old_value, -CLIP, CLIP)
                value_loss = 0.5 * jnp.maximum(jnp.square(value - target), jnp.square(clipped_value - target)).mean()
                ratio = jnp.exp(new_log_prob - old_log_prob)
                advantage = (advantage - advantage.mean()) / (advantage.std() + 1e-8)
                policy_loss = -jnp.minimum(ratio * advantage, jnp.clip(ratio, 1 - CLIP, 1 + CLIP) * advantage).mean()
                entropy = -jnp.sum(jnp.exp(log_probs) * log_probs, axis=-1).mean()
                return policy_loss + VF * value_loss - ENT * entropy

            def sgd(carry, minibatch):
                p, s = carry
                grads = jax.grad(loss_fn)(p, minibatch)
                updates, s = optimizer.update(grads, s, p)
                return (optax.apply_updates(p, updates), s), None

            def epoch(carry, key):
                flat = jax.tree_util.tree_map(lambda x: x.reshape((num_steps * num_envs,) + x.shape[2:]), data)
                permutation = jax.random.permutation(key, num_steps * num_envs)
                minibatches = jax.tree_util.tree_map(
                    lambda x: x[permutation].reshape((MINIBATCHES, -1) + x.shape[1:]), flat
                )
                return jax.lax.scan(sgd, carry, minibatches)[0], None

            key, epoch_key = jax.random.split(key)
            (net_params, opt_state), _ = jax.lax.scan(
                epoch, (net_params, opt_state), jax.random.split(epoch_key, EPOCHS)
            )
            return (net_params, opt_state, env_state, last_obs, running, key), ended

        carry = (net_params, opt_state, env_state, obs, running, key)
        _, ended = jax.lax.scan(update, carry, None, num_updates)
        return ended

    return train


def make_ours(num_envs: int = NUM_ENVS, num_steps: int = NUM_STEPS, total_steps: int = TOTAL_STEPS):
    """Our PPO agent's Anakin form with the baseline's numbers where PPOConfig has them."""
    import launch  # noqa: F401  (import order: JAX substrate before anything else)
    from agents.ppo import PPOConfig
    from launch.engines.anakin import AnakinConfig, make_agent

    config = PPOConfig(
        unroll_length=num_steps, batch_size=num_envs, num_epochs=EPOCHS, num_minibatches=MINIBATCHES,
        learning_rate=LR, discount=GAMMA, gae_lambda=GAE_LAMBDA, clip_epsilon=CLIP, entropy_cost=ENT,
        value_cost=VF, max_gradient_norm=MAX_GRAD_NORM, hidden_sizes=(64, 64),
    )
    return make_agent(
        AnakinConfig(agent="ppo", environment="gymnax/CartPole-v1", max_num_actor_steps=total_steps,
                     agent_config=config)
    )


class Clock:
    """Wall and process CPU seconds since creation."""

    def __init__(self):
        self._wall, self._cpu = time.perf_counter(), time.process_time()

    def read(self):
        return time.perf_counter() - self._wall, time.process_time() - self._cpu


def last_20_mean(episode_returns: np.ndarray) -> float:
    """Mean of the last 20 finished episodes in row order ([U, T, B] or [I, K, B], NaN where none ended)."""
    flat = episode_returns.reshape(-1)
    return float(np.mean(flat[~np.isnan(flat)][-20:]))


def seed_keys(seed: int):
    """One seed's key, batched as the Anakin runner's vmapped init takes its seeds."""
    return jnp.stack([jax.random.PRNGKey(seed)])


def compile_side_by_side(agent, iterations: int, baseline, repeats: int = 1):
    """Our Anakin form (its vmapped init and an `iterations`-long chunk, one seed, compiled as the engine compiles
    them: `launch.engines.anakin.compile_programs`) and a bare loop's jitted `baseline(key)`, each compiled ahead of
    time, apart from running, `repeats` times, alternating which goes first (one compile on a busy 2-core machine
    varies by 10% or more). A throwaway compile goes first, so that neither side pays the process's one-time backend
    start-up.

    Each compile starts from empty tracing caches (`jax.clear_caches()`): otherwise the side compiled second reuses
    the traces of what both share (the network, the PRNG's and optax's jitted helpers) that the first one paid
    for. Ours lowers its chunk from the init's output shapes, so running the init is not timed.

    Returns (init, chunk, baseline, ours_compile, baseline_compile). Each compile is (wall s, CPU s, XLA s), each
    the median over the repeats: XLA s are the wall seconds of XLA's compiles (JAX's own backend-compile events,
    summed over the side's programs). For the baseline, one program, the rest of the wall is JAX tracing and
    lowering it (Python); ours compiles its init on a second thread while it lowers and compiles its chunk, so its
    XLA s overlap its lowering and the difference is no such split. XLA compiles on several threads, so the CPU s
    count more than the wall s."""
    from launch.engines.anakin import compile_programs

    def compile_ours():
        return compile_programs(agent, iterations, iterations, seed_keys(0))

    def compile_baseline():
        return (jax.jit(baseline).lower(jax.random.PRNGKey(0)).compile(),)

    meter = CompileMeter.install()
    jax.jit(lambda x: jnp.tanh(x) @ x).lower(jnp.ones((4, 4))).compile()
    compiled, clocks = {}, {"ours": [], "baseline": []}
    order = [("ours", compile_ours), ("baseline", compile_baseline)]
    for repeat in range(repeats):
        for side, compile_side in order if repeat % 2 == 0 else order[::-1]:
            jax.clear_caches()
            meter.reset()
            clock = Clock()
            compiled[side] = compile_side()
            wall, cpu = clock.read()
            clocks[side].append((wall, cpu, meter.backend_seconds))
    median = {side: tuple(statistics.median(reads) for reads in zip(*clocks[side])) for side in clocks}
    return (*compiled["ours"], *compiled["baseline"], median["ours"], median["baseline"])


# Compiles per side, at least: one compile on the 2-core VM varies by 10-30% from one to the next (TD3's bare
# loop took 3.9 s in one quick run and 5.3 s in the next, 2026-12-01), so two, quick mode's repeats, decide nothing.
COMPILE_REPEATS = 5


def add_repeats_argument(parser: argparse.ArgumentParser) -> None:
    """`--repeats N`: same-seed pairs of runs per side, in place of the mode's (quick 2, full 3 or 5). On the 2-core
    VM one side's identical runs vary by 20% or more (PPO's bare loop: 3.96 to 5.91 s within one process), so a
    ratio of two pairs moves by about 0.1; more pairs narrow it."""
    def pairs(text: str) -> int:
        if not text.isdigit() or int(text) < 1:
            raise argparse.ArgumentTypeError(f"{text!r} is not a number of run pairs: give a whole number >= 1")
        return int(text)

    parser.add_argument("--repeats", type=pairs, default=None, metavar="N",
                        help="same-seed run pairs (default: quick 2, full mode's own)")


def compile_repeats(repeats: int) -> int:
    """Compiles per side for a comparison of `repeats` runs per side: `repeats`, and at least `COMPILE_REPEATS`."""
    return max(repeats, COMPILE_REPEATS)


def compile_note(repeats: int, ours, baseline) -> str:
    """The compile row's note from `compile_side_by_side`'s two medians (`repeats` runs per side): CPU s, and XLA's
    compiles' wall s."""
    return (f"ahead-of-time lower + compile, median of {compile_repeats(repeats)} per side; CPU s {ours[1]:.1f} vs "
            f"{baseline[1]:.1f}; XLA's compiles {ours[2]:.1f} vs {baseline[2]:.1f} s (summed over programs; ours "
            f"compiles its init, a program of its own, beside its chunk)")


def compile_fields(ours, baseline) -> dict:
    """The JSON's compile fields from `compile_side_by_side`'s two medians: wall s, CPU s, XLA's compiles' s."""
    names = ("compile_seconds", "compile_cpu_seconds", "xla_compile_seconds")
    return {name: {"ours": round(o, 2), "baseline": round(b, 2)} for name, o, b in zip(names, ours, baseline)}


def alternate_pairs(repeats: int, run_ours, run_baseline, return_label: str = "return"):
    """Runs each side once per seed `0..repeats-1`, alternating which goes first (a change in the machine's load
    hits both alike). `run(seed)` returns (`Clock.read()`, the return of the last 20 episodes, env steps or None).
    Returns {"ours": [...], "baseline": [...]}, a record per seed, and prints a line per run."""
    runs = {"ours": [], "baseline": []}
    for seed in range(repeats):
        order = [("baseline", run_baseline), ("ours", run_ours)]
        for side, run in order if seed % 2 == 0 else order[::-1]:
            (seconds, cpu_seconds), final_return, env_steps = run(seed)
            record = {"seed": seed, "seconds": round(seconds, 3), "cpu_seconds": round(cpu_seconds, 3),
                      "return_last_20": final_return}
            steps = "" if env_steps is None else f"{env_steps} env steps, "
            if env_steps is not None:
                record["env_steps"] = env_steps
            runs[side].append(record)
            print(f"  {side:8s} seed {seed}: {seconds:.2f} s ({cpu_seconds:.2f} s CPU), {steps}{return_label}(last 20) "
                  f"{final_return:.1f}", flush=True)
    return runs


def paired_runs(agent, iterations: int, baseline, repeats: int, baseline_env_steps: Optional[int] = None,
                return_label: str = "return", compiles: Optional[int] = None):
    """Our Anakin `agent` (one seed, one `iterations`-long chunk) and a bare loop's `baseline(key)` (episode
    returns, NaN where none ended), compiled apart `compiles` times per side (`compile_side_by_side`; None:
    `compile_repeats(repeats)`) and run alternately `repeats` times (`alternate_pairs`). With `baseline_env_steps`
    each record carries its env steps (ours counted from its outputs, the baseline's given). Returns (runs,
    ours_compile, baseline_compile)."""
    init, chunk, compiled, ours_compile, baseline_compile = compile_side_by_side(
        agent, iterations, baseline, compiles or compile_repeats(repeats))
    counted = baseline_env_steps is not None

    def run_ours(seed):
        carries = init(seed_keys(seed))
        jax.block_until_ready(carries)
        clock = Clock()
        _, outputs = chunk(carries, iterations)
        episode_return = jax.device_get(outputs.episode_return[0])
        env_steps = int(jax.device_get(outputs.real[0]).sum()) if counted else None
        return clock.read(), last_20_mean(episode_return), env_steps

    def run_baseline(seed):
        clock = Clock()
        episode_return = jax.device_get(compiled(jax.random.PRNGKey(seed)))
        return clock.read(), last_20_mean(episode_return), baseline_env_steps

    return alternate_pairs(repeats, run_ours, run_baseline, return_label), ours_compile, baseline_compile


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="2 repeats instead of 5")
    add_repeats_argument(parser)
    parser.add_argument("--out", default=None, help="results directory (default benchmarks/results)")
    args = parser.parse_args()
    repeats = args.repeats or (2 if args.quick else 5)
    payload = header("anakin_ppo", quick=args.quick, seeds=list(range(repeats)),
                     packages=["jax", "jaxlib", "flax", "optax", "gymnax", "numpy"])

    agent = make_ours()
    iterations = TOTAL_STEPS // agent.rows_per_iteration
    assert iterations == NUM_UPDATES

    runs, ours_compile, baseline_compile = paired_runs(agent, iterations, make_baseline(), repeats,
                                                       baseline_env_steps=NUM_UPDATES * NUM_STEPS * NUM_ENVS)

    def median(side, field):
        return statistics.median(r[field] for r in runs[side])

    ours_seconds, baseline_seconds = median("ours", "seconds"), median("baseline", "seconds")
    ratio_per_seed = [o["seconds"] / b["seconds"] for o, b in zip(runs["ours"], runs["baseline"])]
    rows = [
        result_row("anakin_ppo_run_time", ours_seconds, baseline_seconds, "s per 500k steps", 1.0,
                   ratio=statistics.median(ratio_per_seed), lower_is_better=True, ours_label="launch.engines.anakin PPO",
                   baseline_label="PureJaxRL-style PPO",
                   note=f"{NUM_UPDATES} updates of {NUM_ENVS}x{NUM_STEPS}, one jitted call; ratio: median of "
                   f"{repeats} same-seed pairs"),
        result_row("anakin_ppo_run_cpu_time", median("ours", "cpu_seconds"), median("baseline", "cpu_seconds"),
                   "CPU s per 500k steps", 1.0, lower_is_better=True, ours_label="launch.engines.anakin PPO",
                   baseline_label="PureJaxRL-style PPO",
                   note="process CPU time (all threads): robust to a busy machine"),
        result_row("anakin_ppo_compile_time", ours_compile[0], baseline_compile[0], "s", None, lower_is_better=True,
                   ours_label="launch.engines.anakin PPO", baseline_label="PureJaxRL-style PPO",
                   note=compile_note(repeats, ours_compile, baseline_compile)),
        result_row("anakin_ppo_return", median("ours", "return_last_20"), median("baseline", "return_last_20"),
                   "return (last 20 episodes, median over seeds)", 0.95,
                   ours_label="launch.engines.anakin PPO", baseline_label="PureJaxRL-style PPO"),
    ]
    print_rows(rows)
    payload.update(
        rows=rows,
        runs=runs,
        **compile_fields(ours_compile, baseline_compile),
        config=dict(num_envs=NUM_ENVS, num_steps=NUM_STEPS, total_steps=TOTAL_STEPS, epochs=EPOCHS,
                    minibatches=MINIBATCHES, learning_rate=LR, baseline_anneals_learning_rate=True),
    )
    path = write_json("anakin_ppo", finish(payload), **({"results_dir": args.out} if args.out else {}))
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
