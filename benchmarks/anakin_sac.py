"""Anakin SAC on gymnax Pendulum-v1: compile time and run time apart, and the return reached, against a bare jitted
SAC loop of the same configuration written here (the baseline, measured in this run).

Both sides: 8 environments stepping once per iteration, 8 SGD steps of 256 uniformly sampled transitions per
iteration (one SGD step per environment step), learning once 1,000 transitions are held; SAC's default networks
(ReLU MLPs 256x256: a tanh-squashed Gaussian policy with a softly bounded log std, twin critics), losses and
optimisers (Adam 1e-3 each, tau 0.005, gamma 0.99, temperature tuned toward -1 nat). Ours runs SAC's own
`update_step` through `launch.engines.anakin` (the code `--launch anakin --agent sac` runs: `agents/sac/anakin.py`,
`acmelike.anakin.off_policy`); the baseline is one plain function: a flat replay ring of 1-step transitions,
gymnax's `step_env` with a reset where the episode ended (`benchmarks.anakin_off_policy.bare_loop`, TD3's, D4PG's
and MPO's too), the same losses written inline. One jitted call of all iterations on each side.

Both sides run alternately (`repeats` times, seed = repeat index); run time is the median over repeats, compile
time the median of at least 5 ahead-of-time lower + compiles per side (`anakin_ppo.COMPILE_REPEATS`), alternating
too. The return is each run's last-20-episode mean.

    python benchmarks/anakin_sac.py [--quick] [--repeats N] [--out benchmarks/results]
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402

from benchmarks.anakin_off_policy import (COMMON_CONFIG, GAMMA, HIDDEN, LR, TAU, bare_loop, compare,  # noqa: E402
                                          pendulum, side_by_side_arguments)


def make_baseline(iterations: int):
    """A bare jitted SAC (own code) in `bare_loop`: train(key) -> episode_return [iterations, NUM_ENVS], NaN unless
    an episode ended there, to be jitted."""
    import flax.linen as nn
    import optax

    _, _, obs_size, action_size, _ = pendulum()
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

    def init_learner(key):
        policy_key, critic_key = jax.random.split(key)
        policy_params = policy.init(policy_key, jnp.zeros((1, obs_size)))
        critic_params = critics.init(critic_key, jnp.zeros((1, obs_size)), jnp.zeros((1, action_size)))
        log_alpha = jnp.zeros(())
        return (policy_params, critic_params, critic_params, log_alpha,
                (adam.init(policy_params), adam.init(critic_params), adam.init(log_alpha)))

    return bare_loop(iterations, init_learner, lambda learner, obs, key: sample_action(learner[0], obs, key)[0],
                     sgd_step)


def main() -> None:
    args = side_by_side_arguments(__doc__, "4k environment steps and 2 repeats, not 20k and 3")
    import launch  # noqa: F401  (import order: JAX substrate before anything else)
    from agents.sac import SACConfig

    config = SACConfig(**COMMON_CONFIG, policy_learning_rate=LR, critic_learning_rate=LR, temperature_learning_rate=LR)
    compare("sac", config, make_baseline, args.quick, args.out, args.repeats)


if __name__ == "__main__":
    main()
