"""Anakin TD3, D4PG and MPO on gymnax Pendulum-v1 against bare jitted loops of the same configuration written
here: compile time and run time apart, side by side in one run, and the return reached (benchmarks/anakin_sac.py
does the same for SAC).

Both sides, every agent: 8 environments stepping once per iteration, 8 SGD steps of 256 uniformly sampled 1-step
transitions per iteration (one SGD step per environment step), learning once 1,000 transitions are held; ReLU MLPs
256x256 (MPO's 128x128, below), Adam 1e-3 for policy and critic, tau 0.005, gamma 0.99, and each agent's own
defaults otherwise:
- TD3: a tanh deterministic policy, twin critics, Gaussian exploration 0.1 in the unit box, target policy
  smoothing (0.2, clipped at 0.5), policy and targets updated every second SGD step;
- D4PG: the same policy but its last layer starting near zero (D4PG's), one critic of 51 atoms on [-1000, 0],
  exploration 0.2; the target distribution at (s', mu'(s')) shifted by the reward and projected onto the atoms,
  the policy following the critic's mean;
- MPO: its own networks' size, ReLU MLPs 128x128 (with 20 sampled actions per state, 256x256 made one quick run
  of the bare loop take 4 minutes on the loaded 2-core VM), a Gaussian policy (tanh mean, softplus stddev), a
  scalar critic evaluated under 20 actions of the target
  policy, E-step weights with a learned temperature (epsilon 0.1), the decoupled M-step held by learned multipliers
  (0.01 on the mean, 1e-3 on the stddev, per action dimension), gradients clipped to norm 40, duals by Adam 1e-2.
Ours runs the agent's own `update_step` through `launch.engines.anakin` (what `--launch anakin --agent NAME`
runs); the baseline is one plain function (`bare_loop`): a flat replay ring, gymnax's `step_env` with a reset where
the episode ended, the losses inline. One jitted call of all iterations on each side.

Both sides run alternately (`repeats` times, seed = repeat index); run time is the median over repeats, compile
time the median of at least 5 ahead-of-time lower + compiles per side (`anakin_ppo.COMPILE_REPEATS`), alternating
too. The return is each run's last-20-episode mean.

    python benchmarks/anakin_off_policy.py [--agent td3 d4pg mpo] [--quick] [--repeats N] [--out benchmarks/results]

Each agent's record goes to `anakin_<agent>.json` (the report's `anakin_td3`, `anakin_d4pg`, `anakin_mpo`).
"""

import argparse
import os
import statistics
import sys
from typing import Optional

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402

from benchmarks.anakin_ppo import add_repeats_argument, compile_fields, compile_note, paired_runs  # noqa: E402
from benchmarks.common import finish, header, print_rows, result_row, write_json  # noqa: E402

NUM_ENVS, SGD_STEPS, BATCH, MIN_REPLAY, MAX_REPLAY = 8, 8, 256, 1_000, 1_000_000
LR, GAMMA, TAU, HIDDEN = 1e-3, 0.99, 0.005, (256, 256)
TD3_NOISE, TD3_TARGET_NOISE, TD3_TARGET_CLIP, TD3_DELAY = 0.1, 0.2, 0.5, 2
D4PG_NOISE, D4PG_ATOMS, D4PG_V_MIN, D4PG_V_MAX = 0.2, 51, -1000.0, 0.0
# The config fields every agent's side shares with its bare loop (SAC's too).
COMMON_CONFIG = dict(batch_size=BATCH, num_sgd_steps_per_step=SGD_STEPS, samples_per_insert=float(BATCH),
                     min_replay_size=MIN_REPLAY, max_replay_size=MAX_REPLAY, policy_hidden_sizes=HIDDEN,
                     critic_hidden_sizes=HIDDEN, discount=GAMMA, tau=TAU)
MPO_SAMPLES, MPO_EPSILON, MPO_EPSILON_MEAN, MPO_EPSILON_STDDEV, MPO_HIDDEN = 20, 0.1, 0.01, 1e-3, (128, 128)
MPO_INIT_LOG_DUAL, MPO_DUAL_LR, MPO_MAX_GRADIENT_NORM, MPO_INIT_STDDEV, MPO_MIN_STDDEV = 10.0, 1e-2, 40.0, 0.5, 1e-3


def _modules(action_size: int, critic_outputs: int, num_critics: int, hidden=HIDDEN, near_zero_policy=False):
    """(policy, critic) flax modules: mu(s) = tanh(MLP(s)); Q(s, a) = MLP([s, a]), `num_critics` of them stacked
    (outputs [N, B, K]), each ending in `critic_outputs` units. `near_zero_policy`: the policy's last layer starts
    near zero (variance scaling 1e-4), as D4PG's does."""
    import flax.linen as nn

    def mlp(x, out, last_init=nn.initializers.lecun_normal()):
        for size in hidden:
            x = nn.relu(nn.Dense(size)(x))
        return nn.Dense(out, kernel_init=last_init)(x)

    policy_init = (nn.initializers.variance_scaling(1e-4, "fan_in", "truncated_normal") if near_zero_policy
                   else nn.initializers.lecun_normal())

    class Policy(nn.Module):
        @nn.compact
        def __call__(self, obs):
            return jnp.tanh(mlp(obs, action_size, policy_init))

    class Critic(nn.Module):
        @nn.compact
        def __call__(self, obs, action):
            return mlp(jnp.concatenate([obs, action], -1), critic_outputs)

    critics = nn.vmap(Critic, variable_axes={"params": 0}, split_rngs={"params": True}, in_axes=None, out_axes=0,
                      axis_size=num_critics)()
    return Policy(), critics


def pendulum():
    """gymnax's Pendulum-v1: (env, params, observation size, action size, action scale)."""
    import gymnax

    env, params = gymnax.make("Pendulum-v1")
    # Pendulum's bounds are symmetric ([-2, 2]): an action in the unit box times the scale.
    return (env, params, env.observation_space(params).shape[0], env.action_space(params).shape[0],
            float(env.action_space(params).high))


def bare_loop(iterations: int, init_learner, act, sgd_step):
    """A bare jitted off-policy loop on Pendulum-v1 around one agent's pieces: `init_learner(key)`, `act(learner,
    obs [B, O], key) -> unit actions [B, A]` and `sgd_step(learner, ((obs, action, reward, next_obs), key)) ->
    (learner, None)`. Returns train(key) -> episode_return [iterations, NUM_ENVS], NaN unless an episode ended
    there, to be jitted."""
    env, params, obs_size, action_size, scale = pendulum()

    def train(key):
        key, learner_key, reset_key = jax.random.split(key, 3)
        learner = init_learner(learner_key)
        reset = jax.vmap(env.reset_env, in_axes=(0, None))
        obs, env_state = reset(jax.random.split(reset_key, NUM_ENVS), params)
        replay = (jnp.zeros((MAX_REPLAY, obs_size)), jnp.zeros((MAX_REPLAY, action_size)), jnp.zeros(MAX_REPLAY),
                  jnp.zeros((MAX_REPLAY, obs_size)))

        def iteration(carry, _):
            learner, env_state, obs, running, replay, size, key = carry
            key, act_key, step_key, reset_key, sample_key, sgd_key = jax.random.split(key, 6)
            action = act(learner, obs, act_key)
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


def _deterministic_pieces(noise: float, critic_outputs: int, num_critics: int, near_zero_policy: bool = False):
    """What TD3's and D4PG's bare loops share: their modules (policy, critics), an Adam, `init_learner` of a
    learner (policy, target policy, critics, target critics, optimiser states, SGD steps) and `act`, Gaussian
    exploration in the unit box."""
    import optax

    _, _, obs_size, action_size, _ = pendulum()
    policy, critics = _modules(action_size, critic_outputs, num_critics, near_zero_policy=near_zero_policy)
    adam = optax.adam(LR)

    def init_learner(key):
        policy_key, critic_key = jax.random.split(key)
        policy_params = policy.init(policy_key, jnp.zeros((1, obs_size)))
        critic_params = critics.init(critic_key, jnp.zeros((1, obs_size)), jnp.zeros((1, action_size)))
        return (policy_params, policy_params, critic_params, critic_params, adam.init(policy_params),
                adam.init(critic_params), jnp.zeros((), jnp.int32))

    def act(learner, obs, key):
        mean = policy.apply(learner[0], obs)
        return jnp.clip(mean + noise * jax.random.normal(key, mean.shape), -1.0, 1.0)

    return policy, critics, adam, init_learner, act


def td3_baseline(iterations: int):
    """A bare jitted TD3 (own code)."""
    import optax

    policy, critics, adam, init_learner, act = _deterministic_pieces(TD3_NOISE, 1, 2)

    def sgd_step(learner, batch_key):
        policy_params, target_policy, critic_params, target_critics, policy_opt, critic_opt, steps = learner
        (obs, action, reward, next_obs), key = batch_key
        noise = jnp.clip(TD3_TARGET_NOISE * jax.random.normal(key, action.shape), -TD3_TARGET_CLIP, TD3_TARGET_CLIP)
        next_action = jnp.clip(policy.apply(target_policy, next_obs) + noise, -1.0, 1.0)
        next_q = jnp.min(critics.apply(target_critics, next_obs, next_action)[..., 0], 0)
        target = jax.lax.stop_gradient(reward + GAMMA * next_q)

        def critic_loss(critic_params):
            return jnp.sum(jnp.mean(0.5 * (critics.apply(critic_params, obs, action)[..., 0] - target) ** 2, -1))

        updates, critic_opt = adam.update(jax.grad(critic_loss)(critic_params), critic_opt)
        critic_params = optax.apply_updates(critic_params, updates)
        steps = steps + 1

        def update_policy(_):
            def policy_loss(policy_params):
                return -jnp.mean(critics.apply(critic_params, obs, policy.apply(policy_params, obs))[0, :, 0])

            updates, new_opt = adam.update(jax.grad(policy_loss)(policy_params), policy_opt)
            new_policy = optax.apply_updates(policy_params, updates)
            return (new_policy, new_opt, optax.incremental_update(new_policy, target_policy, TAU),
                    optax.incremental_update(critic_params, target_critics, TAU))

        policy_params, policy_opt, target_policy, target_critics = jax.lax.cond(
            steps % TD3_DELAY == 0, update_policy,
            lambda _: (policy_params, policy_opt, target_policy, target_critics), None)
        return (policy_params, target_policy, critic_params, target_critics, policy_opt, critic_opt, steps), None

    return bare_loop(iterations, init_learner, act, sgd_step)


def d4pg_baseline(iterations: int):
    """A bare jitted D4PG (own code): the categorical projection written out (Bellemare et al., 2017)."""
    import optax

    policy, critics, adam, init_learner, act = _deterministic_pieces(D4PG_NOISE, D4PG_ATOMS, 1, near_zero_policy=True)
    support = jnp.linspace(D4PG_V_MIN, D4PG_V_MAX, D4PG_ATOMS)
    delta = (D4PG_V_MAX - D4PG_V_MIN) / (D4PG_ATOMS - 1)

    def project(values, probabilities):  # [B, K] atom positions and their mass -> [B, K] mass on `support`
        positions = (jnp.clip(values, D4PG_V_MIN, D4PG_V_MAX) - D4PG_V_MIN) / delta
        weights = jnp.clip(1.0 - jnp.abs(positions[:, :, None] - jnp.arange(D4PG_ATOMS)[None, None, :]), 0.0, 1.0)
        return jnp.sum(probabilities[:, :, None] * weights, axis=1)

    def sgd_step(learner, batch_key):
        policy_params, target_policy, critic_params, target_critics, policy_opt, critic_opt, steps = learner
        (obs, action, reward, next_obs), _ = batch_key
        next_logits = critics.apply(target_critics, next_obs, policy.apply(target_policy, next_obs))[0]
        target = jax.lax.stop_gradient(project(reward[:, None] + GAMMA * support[None], jax.nn.softmax(next_logits)))

        def critic_loss(critic_params):
            logits = critics.apply(critic_params, obs, action)[0]
            return jnp.mean(-jnp.sum(target * jax.nn.log_softmax(logits), -1))

        updates, critic_opt = adam.update(jax.grad(critic_loss)(critic_params), critic_opt)
        critic_params = optax.apply_updates(critic_params, updates)

        def policy_loss(policy_params):
            logits = critics.apply(critic_params, obs, policy.apply(policy_params, obs))[0]
            return -jnp.mean(jnp.sum(jax.nn.softmax(logits) * support, -1))

        updates, policy_opt = adam.update(jax.grad(policy_loss)(policy_params), policy_opt)
        policy_params = optax.apply_updates(policy_params, updates)
        return (policy_params, optax.incremental_update(policy_params, target_policy, TAU), critic_params,
                optax.incremental_update(critic_params, target_critics, TAU), policy_opt, critic_opt, steps + 1), None

    return bare_loop(iterations, init_learner, act, sgd_step)


def mpo_baseline(iterations: int):
    """A bare jitted MPO (own code): scalar critic evaluated under the target policy (expected SARSA), E-step
    weights and temperature dual, decoupled KL-constrained M-step with learned multipliers (MPO's defaults)."""
    import flax.linen as nn
    import optax

    _, _, obs_size, action_size, _ = pendulum()
    small = nn.initializers.variance_scaling(1e-4, "fan_in", "uniform")

    class Policy(nn.Module):
        @nn.compact
        def __call__(self, obs):
            x = obs
            for size in MPO_HIDDEN:
                x = nn.relu(nn.Dense(size)(x))
            mean = jnp.tanh(nn.Dense(action_size, kernel_init=small)(x))
            raw = nn.Dense(action_size, kernel_init=small)(x)
            return mean, jax.nn.softplus(raw) * (MPO_INIT_STDDEV / jax.nn.softplus(0.0)) + MPO_MIN_STDDEV

    policy, (_, critics) = Policy(), _modules(action_size, 1, 1, MPO_HIDDEN)
    clipped = optax.chain(optax.clip_by_global_norm(MPO_MAX_GRADIENT_NORM), optax.adam(LR))
    dual_adam = optax.adam(MPO_DUAL_LR)

    def critic(params, obs, action):  # [B] Q values of unit-box actions, clipped to the box
        return critics.apply(params, obs, jnp.clip(action, -1.0, 1.0))[0, :, 0]

    def sample(params, obs, key):  # [N, B, A] actions from the Gaussian, and its mean and stddev [B, A]
        mean, stddev = policy.apply(params, obs)
        return mean + stddev * jax.random.normal(key, (MPO_SAMPLES,) + mean.shape), mean, stddev

    def init_learner(key):
        policy_key, critic_key = jax.random.split(key)
        policy_params = policy.init(policy_key, jnp.zeros((1, obs_size)))
        critic_params = critics.init(critic_key, jnp.zeros((1, obs_size)), jnp.zeros((1, action_size)))
        duals = (jnp.full((), MPO_INIT_LOG_DUAL), jnp.full((action_size,), MPO_INIT_LOG_DUAL),
                 jnp.full((action_size,), MPO_INIT_LOG_DUAL))
        return (policy_params, policy_params, critic_params, critic_params, duals, clipped.init(policy_params),
                clipped.init(critic_params), dual_adam.init(duals))

    def act(learner, obs, key):
        mean, stddev = policy.apply(learner[0], obs)
        return jnp.clip(mean + stddev * jax.random.normal(key, mean.shape), -1.0, 1.0)

    def log_likelihood(actions, mean, stddev):  # [N, B]
        z = (actions - mean) / stddev
        return jnp.sum(-0.5 * z ** 2 - jnp.log(stddev) - 0.5 * jnp.log(2 * jnp.pi), -1)

    def kl(mean_p, stddev_p, mean_q, stddev_q):  # per dimension, averaged over states: [A]
        ratio = (stddev_p / stddev_q) ** 2
        return jnp.mean(0.5 * (ratio + ((mean_q - mean_p) / stddev_q) ** 2 - 1.0 - jnp.log(ratio)), 0)

    def sgd_step(learner, batch_key):
        (policy_params, target_policy, critic_params, target_critic, duals, policy_opt, critic_opt,
         dual_opt) = learner
        (obs, action, reward, next_obs), key = batch_key
        critic_key, policy_key = jax.random.split(key)
        next_actions, _, _ = sample(target_policy, next_obs, critic_key)
        next_q = jnp.mean(jax.vmap(lambda a: critic(target_critic, next_obs, a))(next_actions), 0)
        target = jax.lax.stop_gradient(reward + GAMMA * next_q)
        grads = jax.grad(lambda p: jnp.mean(0.5 * (critic(p, obs, action) - target) ** 2))(critic_params)
        updates, critic_opt = clipped.update(grads, critic_opt, critic_params)
        critic_params = optax.apply_updates(critic_params, updates)

        actions, target_mean, target_stddev = jax.lax.stop_gradient(sample(target_policy, obs, policy_key))
        q = jax.lax.stop_gradient(jax.vmap(lambda a: critic(target_critic, obs, a))(actions))  # [N, B]

        def loss(policy_params, duals):
            temperature, alpha_mean, alpha_stddev = (jax.nn.softplus(d) + 1e-8 for d in duals)
            weights = jax.lax.stop_gradient(jax.nn.softmax(q / temperature, 0))
            temperature_loss = temperature * (MPO_EPSILON + jnp.mean(
                jax.scipy.special.logsumexp(q / temperature, 0) - jnp.log(float(MPO_SAMPLES))))
            mean, stddev = policy.apply(policy_params, obs)
            fit = -jnp.mean(jnp.sum(weights * (log_likelihood(actions, mean, target_stddev)
                                               + log_likelihood(actions, target_mean, stddev)), 0))
            kl_mean = kl(target_mean, target_stddev, mean, target_stddev)
            kl_stddev = kl(target_mean, target_stddev, target_mean, stddev)
            penalty = jnp.sum(jax.lax.stop_gradient(alpha_mean) * kl_mean
                              + jax.lax.stop_gradient(alpha_stddev) * kl_stddev)
            alpha_loss = jnp.sum(alpha_mean * (MPO_EPSILON_MEAN - jax.lax.stop_gradient(kl_mean))
                                 + alpha_stddev * (MPO_EPSILON_STDDEV - jax.lax.stop_gradient(kl_stddev)))
            return fit + penalty + temperature_loss + alpha_loss

        policy_grads, dual_grads = jax.grad(loss, argnums=(0, 1))(policy_params, duals)
        updates, policy_opt = clipped.update(policy_grads, policy_opt, policy_params)
        policy_params = optax.apply_updates(policy_params, updates)
        updates, dual_opt = dual_adam.update(dual_grads, dual_opt)
        duals = tuple(jnp.maximum(d, -18.0) for d in optax.apply_updates(duals, updates))
        return (policy_params, optax.incremental_update(policy_params, target_policy, TAU), critic_params,
                optax.incremental_update(critic_params, target_critic, TAU), duals, policy_opt, critic_opt,
                dual_opt), None

    return bare_loop(iterations, init_learner, act, sgd_step)


def _our_config(name: str):
    """The agent's config with the bare loop's settings (every field the baseline fixes)."""
    common = dict(COMMON_CONFIG, policy_learning_rate=LR, critic_learning_rate=LR, n_step=1)
    if name == "td3":
        from agents.td3 import TD3Config

        return TD3Config(**common, exploration_noise=TD3_NOISE, target_noise=TD3_TARGET_NOISE,
                         target_noise_clip=TD3_TARGET_CLIP, policy_delay=TD3_DELAY)
    if name == "mpo":
        from agents.mpo import MPOConfig

        common.update(policy_hidden_sizes=MPO_HIDDEN, critic_hidden_sizes=MPO_HIDDEN)
        return MPOConfig(**common, dual_learning_rate=MPO_DUAL_LR, max_gradient_norm=MPO_MAX_GRADIENT_NORM,
                         num_samples=MPO_SAMPLES, epsilon=MPO_EPSILON, epsilon_mean=MPO_EPSILON_MEAN,
                         epsilon_stddev=MPO_EPSILON_STDDEV, init_log_temperature=MPO_INIT_LOG_DUAL,
                         init_log_alpha_mean=MPO_INIT_LOG_DUAL, init_log_alpha_stddev=MPO_INIT_LOG_DUAL,
                         per_dimension_constraints=True, init_stddev=MPO_INIT_STDDEV, min_stddev=MPO_MIN_STDDEV,
                         critic_type="scalar")
    from agents.d4pg import D4PGConfig

    return D4PGConfig(**common, exploration_noise=D4PG_NOISE, num_atoms=D4PG_ATOMS, v_min=D4PG_V_MIN,
                      v_max=D4PG_V_MAX, priority_exponent=0.0, dqda_clipping=0.0)


BASELINES = {"td3": td3_baseline, "d4pg": d4pg_baseline, "mpo": mpo_baseline}


def compare(name: str, config, make_baseline, quick: bool, out=None, repeats: Optional[int] = None) -> None:
    """Our Anakin form of agent `name` under `config` against its bare loop (`make_baseline(iterations)`, a
    `bare_loop`), side by side: prints the rows, writes `anakin_<name>.json`."""
    repeats, total_steps = (repeats or 2, 4_000) if quick else (repeats or 3, 20_000)
    iterations = total_steps // NUM_ENVS

    import launch  # noqa: F401  (import order: JAX substrate before anything else)
    from launch.engines.anakin import AnakinConfig, make_agent

    agent = make_agent(AnakinConfig(agent=name, environment="gymnax/Pendulum-v1", max_num_actor_steps=total_steps,
                                    agent_config=config))
    assert agent.num_envs == NUM_ENVS and agent.rows_per_env == 1
    side_by_side(
        name, agent, make_baseline(iterations), total_steps, repeats, quick, out,
        run_note=f"{iterations} iterations of {NUM_ENVS} steps + {SGD_STEPS} SGD steps of {BATCH}, one jitted call",
        return_note="informative: Pendulum returns are negative, and short quick runs are still learning",
        config=dict(agent=name, num_envs=NUM_ENVS, sgd_steps_per_iteration=SGD_STEPS, batch_size=BATCH,
                    total_steps=total_steps, min_replay_size=MIN_REPLAY, max_replay_size=MAX_REPLAY,
                    hidden_sizes=list(config.policy_hidden_sizes), n_step=config.n_step))


def side_by_side(name: str, agent, baseline, total_steps: int, repeats: int, quick: bool, out, run_note: str,
                 return_note: str, config: dict) -> None:
    """Our Anakin `agent` (one seed, `total_steps` rows in one jitted chunk) against its bare loop's
    `baseline(key)` (episode returns, NaN where none ended), compiled apart and run alternately `repeats` times:
    prints the run, CPU, compile and return rows (`run_note`, `return_note` their notes) and writes
    `anakin_<name>.json` with `config`."""
    iterations = total_steps // agent.rows_per_iteration
    payload = header(f"anakin_{name}", quick=quick, seeds=list(range(repeats)),
                     packages=["jax", "jaxlib", "flax", "optax", "gymnax", "numpy"])
    runs, ours_compile, baseline_compile = paired_runs(agent, iterations, baseline, repeats)

    def median(side, field):
        return statistics.median(r[field] for r in runs[side])

    ratio_per_seed = [o["seconds"] / b["seconds"] for o, b in zip(runs["ours"], runs["baseline"])]
    labels = dict(ours_label=f"launch.engines.anakin {name.upper()}", baseline_label=f"bare jitted {name.upper()}")
    rows = [
        result_row(f"anakin_{name}_run_time", median("ours", "seconds"), median("baseline", "seconds"),
                   f"s per {total_steps // 1000}k steps", 1.0, ratio=statistics.median(ratio_per_seed),
                   lower_is_better=True, **labels,
                   note=f"{run_note}; ratio: median of {repeats} same-seed pairs"),
        result_row(f"anakin_{name}_run_cpu_time", median("ours", "cpu_seconds"), median("baseline", "cpu_seconds"),
                   f"CPU s per {total_steps // 1000}k steps", 1.0, lower_is_better=True, **labels,
                   note="process CPU time (all threads): robust to a busy machine"),
        result_row(f"anakin_{name}_compile_time", ours_compile[0], baseline_compile[0], "s", 1.0,
                   lower_is_better=True, **labels,
                   note=compile_note(repeats, ours_compile, baseline_compile)),
        result_row(f"anakin_{name}_return", median("ours", "return_last_20"), median("baseline", "return_last_20"),
                   "return (last 20 episodes, median over seeds)", None, **labels,
                   note=return_note),
    ]
    print_rows(rows)
    payload.update(
        rows=rows, runs=runs,
        **compile_fields(ours_compile, baseline_compile),
        config=config,
    )
    path = write_json(f"anakin_{name}", finish(payload), **({"results_dir": out} if out else {}))
    print(f"wrote {path}")


def side_by_side_arguments(doc: str, quick: str, agents=None) -> argparse.Namespace:
    """The command line of a `side_by_side` benchmark: `--quick` (`quick` says what it shortens), `--repeats`,
    `--out`, and with `agents` (names) `--agent`, one or more of them (default: all, one after another)."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    if agents is not None:
        parser.add_argument("--agent", choices=sorted(agents), nargs="*", default=list(agents),
                            help="the agents to compare (default: all, one after another)")
    parser.add_argument("--quick", action="store_true", help=quick)
    add_repeats_argument(parser)
    parser.add_argument("--out", default=None, help="results directory (default benchmarks/results)")
    return parser.parse_args()


def main() -> None:
    args = side_by_side_arguments(__doc__, "4k environment steps and 2 repeats, not 20k and 3", agents=BASELINES)
    for name in args.agent:
        print(f"-- {name}", flush=True)
        compare(name, _our_config(name), BASELINES[name], args.quick, args.out, args.repeats)


if __name__ == "__main__":
    main()
