"""Recurrent learner throughput: R2D2 and IMPALA updates/s on Atari-shaped batches, against a bare jitted loop.

R2D2: 64 sequences x 80 steps (burn-in 40, trace 39, 1 bootstrap step); IMPALA: 32 x 20 (+1 bootstrap step);
both on 84x84x4 uint8 frames through the Nature-DQN conv torso and a 512-unit LSTM. The same jitted update runs
inside `SGDLearner` and in a bare loop (`benchmarks.learner_throughput.measure`); the ratio learner / bare is the
shell's cost. On a CPU these updates take seconds each: the numbers that matter come from a GPU.

    python benchmarks/recurrent_learner_throughput.py [--quick] [--out benchmarks/results]
"""

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import jax  # noqa: E402
import numpy as np  # noqa: E402
from dm_env import specs  # noqa: E402

from acmelike.specs import EnvironmentSpec  # noqa: E402
from acmelike.types import ReplaySample, SampleInfo, Step  # noqa: E402
from benchmarks.common import header, machine_info, package_versions, result_row, write_json  # noqa: E402
from benchmarks.learner_throughput import measure  # noqa: E402

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


def r2d2_case(spec, rng):
    from agents.r2d2 import R2D2Config, learning, make_networks

    config = R2D2Config(torso="nature_dqn", lstm_size=512, batch_size=64, burn_in_length=40, trace_length=39)
    networks = make_networks(spec, config)
    batch = sequence_batch(rng, config.batch_size, config.sequence_length, config.lstm_size, {})
    state = learning.init_training_state(networks, config, jax.random.PRNGKey(0))
    shape = f"[{config.batch_size} x {config.sequence_length}] steps of {FRAMES} uint8, burn-in {config.burn_in_length}"
    return learning.make_update_step(networks, config), state, batch, 1, 1, shape


def impala_case(spec, rng):
    from agents.impala import IMPALAConfig, learning, make_networks

    config = IMPALAConfig(torso="nature_dqn", lstm_size=512, batch_size=32, unroll_length=20)
    networks = make_networks(spec, config)
    length = config.unroll_length + 1
    logits = {"logits": np.zeros((config.batch_size, length, NUM_ACTIONS), np.float32)}
    batch = sequence_batch(rng, config.batch_size, length, config.lstm_size, logits)
    state = learning.init_training_state(networks, config, jax.random.PRNGKey(0))
    shape = f"[{config.batch_size} x {length}] steps of {FRAMES} uint8"
    return learning.make_update_step(networks, config), state, batch, 1, 1, shape


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer calls and repeats")
    parser.add_argument("--out", default=None, help="results directory (default benchmarks/results)")
    args = parser.parse_args(argv)
    on_cpu = jax.devices()[0].platform == "cpu"
    # On a CPU one R2D2 update takes seconds: quick mode times one call per side and repeat.
    calls, repeats = (1, 2) if args.quick else ((3, 3) if on_cpu else (50, 5))
    started = header("recurrent_learner_throughput", quick=args.quick, seeds=[0])
    spec = atari_like_spec()
    rng = np.random.default_rng(0)
    results = [
        measure("r2d2", r2d2_case(spec, rng), calls, repeats),
        measure("impala", impala_case(spec, rng), calls * 4, repeats),
    ]
    device = jax.devices()[0]
    payload = {
        "benchmark": "recurrent_learner_throughput",
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
                f"Recurrent learner throughput, {r['agent'].upper()} ({r['batch']})",
                r["sgd_learner_sgd_steps_per_s"],
                r["bare_jitted_loop_sgd_steps_per_s"],
                "updates/s",
                0.95,
                ratio=r["ratio_learner_to_bare"],
                ours_label="SGDLearner",
                baseline_label="bare jitted loop",
            )
            for r in results
        ],
    }
    print(f"device: {payload['device']['kind']} ({payload['device']['platform']}), jax {payload['versions']['jax']}")
    print(f"{'agent':6s} {'bare updates/s':>15s} {'learner updates/s':>18s} {'ratio':>6s} {'compile s':>9s}  batch")
    for r in results:
        print(
            f"{r['agent']:6s} {r['bare_jitted_loop_sgd_steps_per_s']:15.2f} {r['sgd_learner_sgd_steps_per_s']:18.2f} "
            f"{r['ratio_learner_to_bare']:6.3f} {r['compile_seconds']:9.2f}  {r['batch']}"
        )
    name = "recurrent_learner_throughput"
    path = write_json(name, payload, args.out) if args.out else write_json(name, payload)
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
