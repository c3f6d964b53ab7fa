"""Actor throughput: GenericActor with a jitted MLP policy (batch 1) in the EnvironmentLoop, against a bare loop.

Both sides run the same jitted function — DQN's epsilon-greedy `select_action` over its Q-network (MLP 128-128,
`DQNBuilder.make_policy`) — one CartPole-v1 observation at a time, on the device JAX picks (CPU here).
Ours: `EnvironmentLoop(make_gymnasium_environment(...), DQNBuilder.make_actor(...))`, i.e. a `GenericActor` with
a `VariableClient` (DQN's update period) on a static parameter source and no adder. Baseline: the bare loop
`action, state = select_action(params, obs, state); env.step(int(action))` on raw gymnasium — the dispatch
ceiling. The ratio is the actor shell's cost (goal >= 0.85). Compile time is measured separately.

    python benchmarks/actor_throughput.py [--quick] [--out DIR]
"""

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import launch  # noqa: E402,F401  (orders the JAX/TensorFlow imports)
import gymnasium  # noqa: E402
import jax  # noqa: E402

from acmelike.loggers import NoOpLogger  # noqa: E402
from acmelike.specs import make_environment_spec  # noqa: E402
from acmelike.wrappers import make_gymnasium_environment  # noqa: E402
from benchmarks.common import (
    CompileMeter,
    finish,
    header,
    paired_rates,
    print_rows,
    result_row,
    write_json,
)  # noqa: E402
from environment_loops import EnvironmentLoop  # noqa: E402

ENV, SEED, GOAL = "CartPole-v1", 0, 0.85


class StaticSource:
    """A VariableSource whose parameters never change (no learner in this benchmark)."""

    def __init__(self, params):
        self._params = params

    def get_variables(self, names):
        return [self._params for _ in names]


def build():
    from agents.dqn import DQNBuilder, DQNConfig, make_networks

    config = DQNConfig()
    builder = DQNBuilder(config)
    spec = make_environment_spec(make_gymnasium_environment(ENV, seed=SEED))
    networks = make_networks(spec, config)
    params = networks.q_network.init(jax.random.PRNGKey(SEED))
    policy = builder.make_policy(networks=networks, environment_spec=spec)
    return builder, spec, policy, params


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--out", default=None)
    args = parser.parse_args(argv)
    steps, repeats = (5_000, 5) if args.quick else (20_000, 9)
    payload = header("actor_throughput", quick=args.quick, seeds=[SEED])
    meter = CompileMeter.install()
    builder, spec, policy, params = build()

    # The bare loop: the same jitted core, called directly.
    bare_select = jax.jit(policy.select_action)
    meter.reset()
    start = time.perf_counter()
    env = gymnasium.make(ENV)
    observation, _ = env.reset(seed=SEED)
    jax.block_until_ready(bare_select(params, observation, policy.init(jax.random.PRNGKey(SEED))))
    compile_seconds = time.perf_counter() - start

    def bare(num_steps: int = steps) -> int:
        env = gymnasium.make(ENV)
        observation, _ = env.reset(seed=SEED)
        state = policy.init(jax.random.PRNGKey(SEED))
        for _ in range(num_steps):
            action, state = bare_select(params, observation, state)
            observation, _, terminated, truncated, _ = env.step(int(action))
            if terminated or truncated:
                observation, _ = env.reset()
        return num_steps

    def ours(num_steps: int = steps) -> int:
        actor = builder.make_actor(
            random_key=jax.random.PRNGKey(SEED),
            policy=policy,
            environment_spec=spec,
            variable_source=StaticSource(params),
        )
        loop = EnvironmentLoop(make_gymnasium_environment(ENV, seed=SEED), actor, logger=NoOpLogger())
        return loop.run(num_steps=num_steps)

    start = time.perf_counter()
    ours(10)  # GenericActor jits its own copy of select_action: compile it outside the timing
    our_compile_seconds = time.perf_counter() - start
    bare(200)
    timing = paired_rates(ours, bare, repeats)
    payload.update(
        steps_per_repeat=steps,
        device=str(jax.devices()[0]),
        policy="DQN epsilon-greedy over MLP (128, 128), batch 1",
        compile_seconds={
            "bare_first_call": round(compile_seconds, 3),
            "generic_actor_first_episode": round(our_compile_seconds, 3),
            "jax_compile_events": round(meter.seconds, 3),
        },
        timing=timing,
        rows=[
            result_row(
                "Actor throughput (jitted MLP policy, batch 1)",
                round(timing["ours_per_second"]),
                round(timing["baseline_per_second"]),
                "env steps/s",
                GOAL,
                ratio=timing["ratio"],
                ours_label="EnvironmentLoop + GenericActor",
                baseline_label="bare env.step + jitted select_action",
            )
        ],
    )
    path = write_json("actor_throughput", finish(payload), *([args.out] if args.out else []))
    print_rows(payload["rows"])
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
