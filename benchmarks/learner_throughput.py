"""Learner throughput: SGD updates/s of each agent's update step inside `SGDLearner`, against a bare jitted loop.

Both sides run the same jitted update (`scan_update_steps(update_step, K)`) on the same synthetic batch, already
on the device JAX picks (CPU here, a GPU where one is visible). The bare loop only dispatches and blocks at the
end; the learner shell also pulls from an iterator, checks the loss for NaN, counts and logs. The ratio
learner / bare is the shell's cost (goal: >= 0.95). Compile time is measured separately from run time.
SAC (batch 256, 256x256 policy and twin critics, three optimisers in one TrainingState) runs on a Pendulum-like
spec (3-d observations, one action in [-2, 2]) with its default number of SGD steps fused per learner step; so
does MPO (batch 256, 128x128 MLPs, 20 sampled actions per state, policy, critic and dual optimisers). MuZero (its
defaults: 64 sequences x 36 steps: K = 5 unroll steps, n = 30, 1 bootstrap step, with the search's `action_weights` and
`root_value` as extras) runs on CartPole-shaped steps; its update unrolls the model's MLPs K steps.
R2D2 (64 sequences x 80 steps: burn-in 40, trace 39, 1 bootstrap step) and IMPALA (32 x 20, +1 bootstrap step) run
on Atari-shaped batches: 84x84x4 uint8 frames through the Nature-DQN conv torso and a 512-unit LSTM. On a CPU one
of those updates takes seconds, so they run only a few calls there, and not at all in quick mode: the numbers
that matter come from a GPU.

    python benchmarks/learner_throughput.py [--quick] [--agents dqn ppo sac mpo muzero r2d2 impala]
        [--out benchmarks/results]
"""

import argparse
import importlib
import itertools
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import jax  # noqa: E402
import numpy as np  # noqa: E402
from dm_env import specs  # noqa: E402

from acmelike.learners import SGDLearner, scan_update_steps  # noqa: E402
from acmelike.specs import EnvironmentSpec  # noqa: E402
from acmelike.types import ReplaySample, SampleInfo, Step, Transition  # noqa: E402
from benchmarks.common import RESULTS_DIR, header, machine_info, median_rate, package_versions, result_row, write_json  # noqa: E402


def cartpole_like_spec(observation_size: int, num_actions: int) -> EnvironmentSpec:
    return EnvironmentSpec(
        observations=specs.Array((observation_size,), np.float32, "observation"),
        actions=specs.DiscreteArray(num_actions, np.int32, "action"),
        rewards=specs.Array((), np.float32, "reward"),
        discounts=specs.BoundedArray((), np.float32, 0.0, 1.0, "discount"),
    )


def dqn_case(spec, rng):
    from agents.dqn import DQNConfig, learning, make_networks

    config = DQNConfig()
    networks = make_networks(spec, config)
    n = config.batch_size * config.num_sgd_steps_per_step
    obs = spec.observations.shape
    batch = ReplaySample(
        info=SampleInfo(np.arange(n, dtype=np.uint64), rng.uniform(1e-4, 1e-3, n), np.full(n, 10_000)),
        data=Transition(
            observation=rng.normal(size=(n,) + obs).astype(np.float32),
            action=rng.integers(0, spec.actions.num_values, n).astype(np.int32),
            reward=rng.normal(size=n).astype(np.float32),
            discount=np.full(n, 0.97, np.float32),
            next_observation=rng.normal(size=(n,) + obs).astype(np.float32),
        ),
    )
    state = learning.init_training_state(networks, config, jax.random.PRNGKey(0))
    shape = f"{config.num_sgd_steps_per_step} x [{config.batch_size}] transitions, obs {obs}"
    return learning.make_update_step(networks, config), state, batch, config.num_sgd_steps_per_step, 1, shape


def ppo_case(spec, rng):
    from agents.ppo import PPOConfig, learning, make_networks

    config = PPOConfig()
    networks = make_networks(spec, config)
    b, t = config.batch_size, config.unroll_length + 1
    obs = spec.observations.shape
    starts = np.zeros((b, t), bool)
    starts[:, t // 2] = True  # one episode boundary per sequence, as on CartPole
    batch = ReplaySample(
        info=SampleInfo(np.arange(b, dtype=np.uint64), np.ones(b), np.full(b, b)),
        data=Step(
            observation=rng.normal(size=(b, t) + obs).astype(np.float32),
            action=rng.integers(0, spec.actions.num_values, (b, t)).astype(np.int32),
            reward=np.ones((b, t), np.float32),
            discount=np.ones((b, t), np.float32),
            start_of_episode=starts,
            extras={"log_prob": np.full((b, t), -0.69, np.float32)},
        ),
    )
    state = learning.init_training_state(networks, config, jax.random.PRNGKey(0))
    sgd_steps = config.num_epochs * config.num_minibatches
    shape = f"[{b} x {t}] steps, obs {obs}, {config.num_epochs} epochs x {config.num_minibatches} minibatches"
    return learning.make_update_step(networks, config), state, batch, 1, sgd_steps, shape


def pendulum_like_spec() -> EnvironmentSpec:
    return EnvironmentSpec(
        observations=specs.Array((3,), np.float32, "observation"),
        actions=specs.BoundedArray((1,), np.float32, -2.0, 2.0, "action"),
        rewards=specs.Array((), np.float32, "reward"),
        discounts=specs.BoundedArray((), np.float32, 0.0, 1.0, "discount"),
    )


def continuous_transition_case(agent):
    """A case for an actor-critic agent on transitions (SAC, MPO): its default config, batch and update step."""
    definition = importlib.import_module(f"agents.{agent}").AGENT
    learning = importlib.import_module(f"agents.{agent}.learning")

    def case(spec, rng):
        config = definition.config_class()
        networks = definition.make_networks(spec, config)
        n = config.batch_size * config.num_sgd_steps_per_step
        obs, actions = spec.observations.shape, spec.actions.shape
        batch = ReplaySample(
            info=SampleInfo(np.arange(n, dtype=np.uint64), np.full(n, 1.0 / n), np.full(n, n)),
            data=Transition(
                observation=rng.normal(size=(n,) + obs).astype(np.float32),
                action=rng.uniform(spec.actions.minimum, spec.actions.maximum, (n,) + actions).astype(np.float32),
                reward=rng.normal(size=n).astype(np.float32),
                discount=np.full(n, 0.99, np.float32),
                next_observation=rng.normal(size=(n,) + obs).astype(np.float32),
            ),
        )
        state = learning.init_training_state(networks, config, jax.random.PRNGKey(0))
        shape = (f"{config.num_sgd_steps_per_step} x [{config.batch_size}] transitions, obs {obs}, "
                 f"MLPs {config.policy_hidden_sizes}")
        return learning.make_update_step(networks, config), state, batch, config.num_sgd_steps_per_step, 1, shape

    return case


def muzero_case(spec, rng):
    from agents.muzero import MuZeroConfig, learning, make_networks

    config = MuZeroConfig()
    networks = make_networks(spec, config)
    b, t, a = config.batch_size, config.sequence_length, spec.actions.num_values
    obs = spec.observations.shape
    starts = np.zeros((b, t), bool)
    starts[:, t // 2] = True  # one episode boundary per sequence (as on CartPole): n-step targets stop at it
    batch = ReplaySample(
        info=SampleInfo(np.arange(b, dtype=np.uint64), rng.uniform(1e-4, 1e-3, b), np.full(b, 10_000)),
        data=Step(
            observation=rng.normal(size=(b, t) + obs).astype(np.float32),
            action=rng.integers(0, a, (b, t)).astype(np.int32),
            reward=np.ones((b, t), np.float32),
            discount=np.ones((b, t), np.float32),
            start_of_episode=starts,
            extras={"action_weights": rng.dirichlet(np.ones(a), (b, t)).astype(np.float32),
                    "root_value": rng.normal(size=(b, t)).astype(np.float32)},
        ),
    )
    state = learning.init_training_state(networks, config, jax.random.PRNGKey(0))
    shape = (f"[{b} x {t}] steps (K {config.num_unroll_steps} + n {config.n_step} + 1), obs {obs}, "
             f"MLPs {config.hidden_sizes}")
    return learning.make_update_step(networks, config), state, batch, 1, 1, shape


FRAMES = (84, 84, 4)
NUM_ACTIONS = 18


def atari_like_spec() -> EnvironmentSpec:
    return EnvironmentSpec(
        observations=specs.Array(FRAMES, np.uint8, "observation"),
        actions=specs.DiscreteArray(NUM_ACTIONS, np.int32, "action"),
        rewards=specs.Array((), np.float32, "reward"),
        discounts=specs.BoundedArray((), np.float32, 0.0, 1.0, "discount"),
    )


def sequence_batch(rng, batch, length, lstm_size, extras):
    starts = np.zeros((batch, length), bool)
    starts[:, length // 2] = True  # one episode boundary per sequence
    core_state = np.zeros((batch, length, lstm_size), np.float32)
    return ReplaySample(
        info=SampleInfo(np.arange(batch, dtype=np.uint64), rng.uniform(1e-4, 1e-3, batch), np.full(batch, 10_000)),
        data=Step(
            observation=rng.integers(0, 256, (batch, length) + FRAMES, dtype=np.uint8),
            action=rng.integers(0, NUM_ACTIONS, (batch, length)).astype(np.int32),
            reward=rng.normal(size=(batch, length)).astype(np.float32),
            discount=np.ones((batch, length), np.float32),
            start_of_episode=starts,
            extras={"core_state": (core_state, core_state), **extras},
        ),
    )


def r2d2_case(spec, rng, batch_size: int = 64):
    from agents.r2d2 import R2D2Config, learning, make_networks

    config = R2D2Config(torso="nature_dqn", lstm_size=512, batch_size=batch_size, burn_in_length=40, trace_length=39)
    networks = make_networks(spec, config)
    batch = sequence_batch(rng, config.batch_size, config.sequence_length, config.lstm_size, {})
    state = learning.init_training_state(networks, config, jax.random.PRNGKey(0))
    shape = f"[{config.batch_size} x {config.sequence_length}] steps of {FRAMES} uint8, burn-in {config.burn_in_length}"
    return learning.make_update_step(networks, config), state, batch, 1, 1, shape


def impala_case(spec, rng, batch_size: int = 32):
    from agents.impala import IMPALAConfig, learning, make_networks

    config = IMPALAConfig(torso="nature_dqn", lstm_size=512, batch_size=batch_size, unroll_length=20)
    networks = make_networks(spec, config)
    length = config.unroll_length + 1
    logits = {"logits": np.zeros((config.batch_size, length, NUM_ACTIONS), np.float32)}
    batch = sequence_batch(rng, config.batch_size, length, config.lstm_size, logits)
    state = learning.init_training_state(networks, config, jax.random.PRNGKey(0))
    shape = f"[{config.batch_size} x {length}] steps of {FRAMES} uint8"
    return learning.make_update_step(networks, config), state, batch, 1, 1, shape


def measure(name, case, calls: int, repeats: int, loss_keys=("loss",)):
    update_step, state, batch, scan_steps, inner_sgd_steps, shape = case
    batch = jax.device_put(batch)
    sgd_per_call = scan_steps * inner_sgd_steps

    bare_update = jax.jit(scan_update_steps(update_step, scan_steps))
    start = time.perf_counter()
    jax.block_until_ready(bare_update(state, batch))
    compile_s = time.perf_counter() - start

    def bare():
        s = state
        for _ in range(calls):
            s, _, _ = bare_update(s, batch)
        jax.block_until_ready(s)
        return calls * sgd_per_call

    learner = SGDLearner(
        state=state,
        update_step=update_step,
        iterator=itertools.repeat(batch),
        variables={},
        num_sgd_steps_per_step=scan_steps,
        loss_keys=loss_keys,
    )
    learner.step()  # compile the learner's own jit outside the timing

    def shell():
        for _ in range(calls):
            learner.step()
        jax.block_until_ready(learner.state)
        return calls * sgd_per_call

    # Interleave so drift in machine load hits both sides alike.
    bare_rates, shell_rates = [], []
    for _ in range(repeats):
        bare_rates.append(median_rate(bare, 1)["median_per_second"])
        shell_rates.append(median_rate(shell, 1)["median_per_second"])
    bare_rate, shell_rate = float(np.median(bare_rates)), float(np.median(shell_rates))
    return {
        "agent": name,
        "batch": shape,
        "sgd_steps_per_call": sgd_per_call,
        "compile_seconds": round(compile_s, 3),
        "bare_jitted_loop_sgd_steps_per_s": float(f"{bare_rate:.4g}"),  # R2D2 on a CPU: < 0.1/s
        "sgd_learner_sgd_steps_per_s": float(f"{shell_rate:.4g}"),
        "ratio_learner_to_bare": round(shell_rate / bare_rate, 3),
        "repeats": repeats,
        "calls_per_repeat": calls,
    }


def agent_loss_keys(agent):
    """The losses `SGDLearner` checks for NaN: the agent's `LOSS_KEYS` where it has several, else "loss"."""
    return getattr(importlib.import_module(f"agents.{agent}.learning"), "LOSS_KEYS", ("loss",))


# name -> (case builder, spec builder, calls relative to DQN's, whether it is one of the heavy Atari-shaped cases)
CASES = {
    "dqn": (dqn_case, lambda args: cartpole_like_spec(args.observation_size, args.num_actions), 1.0, False),
    "ppo": (ppo_case, lambda args: cartpole_like_spec(args.observation_size, args.num_actions), 0.2, False),
    "sac": (continuous_transition_case("sac"), lambda args: pendulum_like_spec(), 0.2, False),
    "mpo": (continuous_transition_case("mpo"), lambda args: pendulum_like_spec(), 0.2, False),
    "muzero": (muzero_case, lambda args: cartpole_like_spec(args.observation_size, args.num_actions), 0.2, False),
    "r2d2": (r2d2_case, lambda args: atari_like_spec(), 1.0, True),
    "impala": (impala_case, lambda args: atari_like_spec(), 4.0, True),
}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer calls and repeats")
    parser.add_argument("--agents", nargs="+", choices=sorted(CASES), default=list(CASES))
    parser.add_argument("--out", default=None, help="results directory (default benchmarks/results)")
    parser.add_argument("--observation-size", type=int, default=4)
    parser.add_argument("--num-actions", type=int, default=2)
    args = parser.parse_args(argv)
    on_cpu = jax.devices()[0].platform == "cpu"
    calls, repeats = (50, 3) if args.quick else (300, 5)
    # On a CPU one Atari-shaped R2D2 update takes seconds: a handful of calls per side and repeat.
    heavy_calls, heavy_repeats = (1, 2) if args.quick else ((3, 3) if on_cpu else (50, 5))
    started = header("learner_throughput", quick=args.quick, seeds=[0])
    rng = np.random.default_rng(0)
    results = []
    # Quick mode on a CPU leaves the conv cases out: one of their updates takes seconds there, the figure says
    # nothing a GPU run would, and it would make "quick" take many minutes. Full mode, or any GPU, runs them.
    agents = [name for name in args.agents if not (args.quick and on_cpu and CASES[name][3])]
    for name in sorted(set(args.agents) - set(agents)):
        print(f"{name}: skipped in quick mode on a CPU (84x84 conv updates); run --full, or on a GPU", flush=True)
    for name in agents:
        make_case, make_spec, scale, heavy = CASES[name]
        base_calls, base_repeats = (heavy_calls, heavy_repeats) if heavy else (calls, repeats)
        case = make_case(make_spec(args), rng)
        calls_per_repeat = max(int(base_calls * scale), 1 if heavy else 10)
        results.append(measure(name, case, calls_per_repeat, base_repeats, agent_loss_keys(name)))
        print(f"{name}: {results[-1]['sgd_learner_sgd_steps_per_s']} SGD steps/s", flush=True)
    device = jax.devices()[0]
    payload = {
        "benchmark": "learner_throughput",
        "device": {"platform": device.platform, "kind": getattr(device, "device_kind", str(device))},
        "machine": machine_info(),
        "versions": package_versions(["jax", "jaxlib", "flax", "optax", "rlax", "numpy"]),
        "seed": 0,
        "mode": started["mode"],
        "started_at": started["started_at"],
        "load_average_at_start": started["load_average_at_start"],
        "results": results,
        "rows": [
            result_row(
                f"Learner throughput, {r['agent'].upper()} ({r['batch']})",
                r["sgd_learner_sgd_steps_per_s"],
                r["bare_jitted_loop_sgd_steps_per_s"],
                "SGD steps/s",
                0.95,
                ratio=r["ratio_learner_to_bare"],
                ours_label="SGDLearner",
                baseline_label="bare jitted loop",
            )
            for r in results
        ],
    }
    print(f"device: {payload['device']['kind']} ({payload['device']['platform']}), jax {payload['versions']['jax']}")
    print(f"{'agent':6s} {'bare SGD steps/s':>17s} {'learner SGD steps/s':>20s} {'ratio':>6s} {'compile s':>9s}  batch")
    for r in results:
        print(
            f"{r['agent']:6s} {r['bare_jitted_loop_sgd_steps_per_s']:17.4g} {r['sgd_learner_sgd_steps_per_s']:20.4g} "
            f"{r['ratio_learner_to_bare']:6.3f} {r['compile_seconds']:9.2f}  {r['batch']}"
        )
    path = write_json("learner_throughput", payload, args.out or RESULTS_DIR)
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
