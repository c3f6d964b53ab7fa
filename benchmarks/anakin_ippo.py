"""Anakin IPPO on JaxMARL's MPE simple_spread: run time, compile time and the team return reached, against a
JaxMARL-style single-file IPPO of the same configuration written here (the baseline, measured in this run).

The baseline follows JaxMARL's `ippo_ff_mpe.py` layout (own code): the agents' observations are "batchified"
into one [agents x envs] batch for one shared actor-critic, JaxMARL's own `env.step` (auto-reset) runs vmapped
over environments, GAE per agent, epochs of shuffled minibatches, all in one jitted `lax.scan`. To do the same
work as ours it also feeds each agent's one-hot id and uses the same numbers: 16 environments x 128 steps per
update, 4 epochs of 4 minibatches, Adam 2.5e-3 eps 1e-5 after clipping to norm 0.5, gamma 0.99, lambda 0.95,
clip 0.2, entropy 0.01, value 0.5, tanh MLPs 64x64. Ours is `--launch anakin` with IPPO's own update step
(`launch.engines.anakin`, `agents/ippo/anakin.py`), one jitted call of every update on each side.

What differs by design: our stream spends one row per episode on the padding row after its last step (26 rows
per 25-step episode; rows are what `--steps` counts), and ends episodes at 25 steps where JaxMARL's step ends
them at 26 (`acmelike/anakin/jaxmarl.py`). Rates are therefore per *environment step* on both sides.

Today's stack only (jaxmarl needs Python >= 3.11): elsewhere the JSON and rows say so.

    .venv/bin/python benchmarks/anakin_ippo.py [--quick] [--repeats N] [--out DIR]
"""

import argparse
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from benchmarks.common import finish, header, print_rows, result_row, write_json  # noqa: E402

ENV = "MPE_simple_spread_v3"
NUM_ENVS, NUM_STEPS = 16, 128
EPOCHS, MINIBATCHES = 4, 4
LR, GAMMA, GAE_LAMBDA, CLIP, ENT, VF, MAX_GRAD_NORM = 2.5e-3, 0.99, 0.95, 0.2, 0.01, 0.5, 0.5


def make_baseline(num_updates: int):
    """A JaxMARL-style IPPO (own code): train(key) -> team episode returns [U, T, E], NaN unless one ended there."""
    import jax
    import jax.numpy as jnp
    import jaxmarl
    import optax

    from benchmarks.anakin_ppo import baseline_actor_critic, baseline_gae

    env = jaxmarl.make(ENV)
    agents = tuple(env.agents)
    num_agents = len(agents)
    num_actions = env.action_space(agents[0]).n
    observation_size = env.observation_space(agents[0]).shape[0]
    ids = jnp.repeat(jnp.eye(num_agents), NUM_ENVS, axis=0)  # rows agent-major, as batchify stacks them

    network = baseline_actor_critic(num_actions)
    optimizer = optax.chain(optax.clip_by_global_norm(MAX_GRAD_NORM), optax.adam(LR, eps=1e-5))

    def batchify(per_agent):  # {agent: [E, ...]} -> [agents * E, ...]
        return jnp.concatenate([per_agent[agent] for agent in agents])

    def unbatchify(x):  # [agents * E, ...] -> {agent: [E, ...]}
        return {agent: x[index * NUM_ENVS:(index + 1) * NUM_ENVS] for index, agent in enumerate(agents)}

    def features(observations):
        return jnp.concatenate([batchify(observations), ids], -1)

    def train(key):
        key, init_key, reset_key = jax.random.split(key, 3)
        net_params = network.init(init_key, jnp.zeros((1, observation_size + num_agents)))
        opt_state = optimizer.init(net_params)
        observations, env_state = jax.vmap(env.reset)(jax.random.split(reset_key, NUM_ENVS))
        running = jnp.zeros(NUM_ENVS)

        def env_step(carry, _):
            net_params, env_state, observations, running, key = carry
            key, act_key, step_key = jax.random.split(key, 3)
            x = features(observations)
            logits, value = network.apply(net_params, x)
            action = jax.random.categorical(act_key, logits)
            log_prob = jnp.take_along_axis(jax.nn.log_softmax(logits), action[:, None], 1)[:, 0]
            observations, env_state, reward, done, _ = jax.vmap(env.step)(
                jax.random.split(step_key, NUM_ENVS), env_state, unbatchify(action))
            team = running + sum(reward[agent] for agent in agents)
            episode_done = done["__all__"]
            record = (x, action, log_prob, value, batchify(reward), batchify(done).astype(jnp.float32))
            carry = (net_params, env_state, observations, jnp.where(episode_done, 0.0, team), key)
            return carry, (record, jnp.where(episode_done, team, jnp.nan))

        def update(carry, _):
            net_params, opt_state, env_state, observations, running, key = carry
            (_, env_state, observations, running, key), (batch, ended) = jax.lax.scan(
                env_step, (net_params, env_state, observations, running, key), None, NUM_STEPS)
            x, action, log_prob, value, reward, done = batch
            _, last_value = network.apply(net_params, features(observations))

            advantages = baseline_gae(done, value, reward, last_value, GAMMA, GAE_LAMBDA)
            data = (x, action, log_prob, advantages, advantages + value)

            def loss_fn(params, minibatch):
                x, action, old_log_prob, advantage, target = minibatch
                logits, value = network.apply(params, x)
                log_probs = jax.nn.log_softmax(logits)
                ratio = jnp.exp(jnp.take_along_axis(log_probs, action[:, None], 1)[:, 0] - old_log_prob)
                advantage = (advantage - advantage.mean()) / (advantage.std() + 1e-8)
                policy_loss = -jnp.minimum(ratio * advantage, jnp.clip(ratio, 1 - CLIP, 1 + CLIP) * advantage).mean()
                entropy = -jnp.sum(jnp.exp(log_probs) * log_probs, axis=-1).mean()
                return policy_loss + VF * 0.5 * jnp.square(value - target).mean() - ENT * entropy

            def sgd(carry, minibatch):
                params, state = carry
                updates, state = optimizer.update(jax.grad(loss_fn)(params, minibatch), state, params)
                return (optax.apply_updates(params, updates), state), None

            def epoch(carry, key):
                size = NUM_STEPS * NUM_ENVS * num_agents
                flat = jax.tree_util.tree_map(lambda a: a.reshape((size,) + a.shape[2:]), data)
                permutation = jax.random.permutation(key, size)
                minibatches = jax.tree_util.tree_map(lambda a: a[permutation].reshape((MINIBATCHES, -1) + a.shape[1:]),
                                                     flat)
                return jax.lax.scan(sgd, carry, minibatches)[0], None

            key, epoch_key = jax.random.split(key)
            (net_params, opt_state), _ = jax.lax.scan(epoch, (net_params, opt_state),
                                                      jax.random.split(epoch_key, EPOCHS))
            return (net_params, opt_state, env_state, observations, running, key), ended

        _, ended = jax.lax.scan(update, (net_params, opt_state, env_state, observations, running, key), None,
                                num_updates)
        return ended

    return train


def main() -> None:
    from benchmarks.anakin_ppo import add_repeats_argument, compile_fields, compile_note, paired_runs

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="2 repeats of 100k rows instead of 5 of 500k")
    add_repeats_argument(parser)
    parser.add_argument("--out", default=None, help="results directory (default benchmarks/results)")
    args = parser.parse_args()
    repeats, total_rows = (args.repeats or 2, 100_000) if args.quick else (args.repeats or 5, 500_000)
    payload = header("anakin_ippo", quick=args.quick, seeds=list(range(repeats)),
                     packages=["jax", "jaxlib", "flax", "optax", "jaxmarl", "numpy"])
    try:
        import jaxmarl  # noqa: F401
    except ImportError as error:
        reason = f"needs jaxmarl (Python >= 3.11, today's stack: .venv): {error}"
        print(reason)
        payload.update(available=False, reason=reason, rows=[
            result_row("anakin_ippo_run_time", None, None, "s", None, lower_is_better=True, note=reason)])
        write_json("anakin_ippo", finish(payload), **({"results_dir": args.out} if args.out else {}))
        return

    import jax
    import jax.numpy as jnp

    from agents.ippo import IPPOConfig
    from launch.engines.anakin import AnakinConfig, make_agent

    config = IPPOConfig(
        unroll_length=NUM_STEPS, batch_size=NUM_ENVS, num_epochs=EPOCHS, num_minibatches=MINIBATCHES,
        learning_rate=LR, discount=GAMMA, gae_lambda=GAE_LAMBDA, clip_epsilon=CLIP, entropy_cost=ENT,
        value_cost=VF, max_gradient_norm=MAX_GRAD_NORM, hidden_sizes=(64, 64),
    )
    agent = make_agent(AnakinConfig(agent="ippo", environment="jaxmarl/" + ENV, max_num_actor_steps=total_rows,
                                    agent_config=config))
    iterations = total_rows // agent.rows_per_iteration

    runs, ours_compile, baseline_compile = paired_runs(
        agent, iterations, make_baseline(iterations), repeats,
        baseline_env_steps=iterations * NUM_STEPS * NUM_ENVS, return_label="team return")
    for record in runs["ours"] + runs["baseline"]:
        record["env_steps_per_second"] = round(record["env_steps"] / record["seconds"], 1)

    def median(side, field):
        return statistics.median(r[field] for r in runs[side])

    pairs = list(zip(runs["ours"], runs["baseline"]))
    label, baseline_label = "launch.engines.anakin IPPO", "JaxMARL-style IPPO"
    rows = [
        result_row("anakin_ippo_env_steps_per_second", median("ours", "env_steps_per_second"),
                   median("baseline", "env_steps_per_second"), "env steps/s", 0.8,
                   ratio=statistics.median(o["env_steps_per_second"] / b["env_steps_per_second"] for o, b in pairs),
                   ours_label=label, baseline_label=baseline_label,
                   note=f"{iterations} updates of {NUM_ENVS}x{NUM_STEPS} rows, one jitted call; our rows include "
                        "one padding row per episode; ratio: median of same-seed pairs"),
        result_row("anakin_ippo_compile_time", ours_compile[0], baseline_compile[0], "s", None, lower_is_better=True,
                   ours_label=label, baseline_label=baseline_label,
                   note=compile_note(repeats, ours_compile, baseline_compile)),
        result_row("anakin_ippo_return", median("ours", "return_last_20"), median("baseline", "return_last_20"),
                   "team return (last 20 episodes, median over seeds)", None, ours_label=label,
                   baseline_label=baseline_label,
                   note="returns are negative: ratio above 1 is worse; episodes are 25 steps ours, 26 JaxMARL's"),
    ]
    print_rows(rows)
    payload.update(rows=rows, runs=runs, available=True,
                   **compile_fields(ours_compile, baseline_compile),
                   config=dict(num_envs=NUM_ENVS, num_steps=NUM_STEPS, total_rows=total_rows, epochs=EPOCHS,
                               minibatches=MINIBATCHES, learning_rate=LR))
    path = write_json("anakin_ippo", finish(payload), **({"results_dir": args.out} if args.out else {}))
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
