"""Environment loop overhead: CartPole-v1 through the gymnasium adapter and EnvironmentLoop, against raw gymnasium.

Ours: `EnvironmentLoop(make_gymnasium_environment("CartPole-v1"), NoOpActor())` (gymnasium -> dm_env adapter in
single precision, the loop calling select_action/observe/update every step, episode results to a NoOpLogger).
Baseline: the raw gymnasium loop on the same `gymnasium.make("CartPole-v1")` (so the same TimeLimit and checker
wrappers): reset, step until terminated or truncated, count steps and sum the return. Both sides take the same
action every step (0: the pole falls in ~9 steps, so resets are frequent — the loop's worst case). Goal: >= 0.90.

    python benchmarks/env_loop_overhead.py [--quick] [--out DIR]
"""

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import launch  # noqa: E402,F401  (orders the JAX/TensorFlow imports)
import gymnasium  # noqa: E402
import numpy as np  # noqa: E402

from acmelike import core  # noqa: E402
from acmelike.loggers import NoOpLogger  # noqa: E402
from acmelike.wrappers import make_gymnasium_environment  # noqa: E402
from benchmarks.common import finish, header, paired_rates, print_rows, result_row, write_json  # noqa: E402
from environment_loops import EnvironmentLoop  # noqa: E402

ENV, ACTION, SEED, GOAL = "CartPole-v1", 0, 0, 0.90


class NoOpActor(core.Actor):
    """Always the same action; observes and updates nothing."""

    def __init__(self, action):
        self._action = action

    def select_action(self, observation):
        return self._action

    def observe_first(self, timestep):
        pass

    def observe(self, action, next_timestep):
        pass

    def update(self, wait: bool = False):
        pass


def raw_loop(num_steps: int) -> int:
    env = gymnasium.make(ENV)
    env.reset(seed=SEED)
    steps = 0
    while steps < num_steps:
        env.reset()
        episode_return, done = 0.0, False
        while not done:
            _, reward, terminated, truncated, _ = env.step(ACTION)
            steps += 1
            episode_return += reward
            done = terminated or truncated
    return steps


def our_loop(num_steps: int) -> int:
    environment = make_gymnasium_environment(ENV, seed=SEED)
    loop = EnvironmentLoop(environment, NoOpActor(np.int32(ACTION)), logger=NoOpLogger())
    return loop.run(num_steps=num_steps)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--out", default=None)
    args = parser.parse_args(argv)
    steps, repeats = (50_000, 5) if args.quick else (200_000, 9)
    payload = header("env_loop_overhead", quick=args.quick, seeds=[SEED])
    our_loop(1_000), raw_loop(1_000)  # warm caches and imports
    timing = paired_rates(lambda: our_loop(steps), lambda: raw_loop(steps), repeats)
    payload.update(
        steps_per_repeat=steps,
        action=ACTION,
        compile_seconds=0.0,  # nothing is compiled: no JAX on either side
        timing=timing,
        rows=[
            result_row(
                "Environment loop (CartPole-v1, no-op actor)",
                round(timing["ours_per_second"]),
                round(timing["baseline_per_second"]),
                "env steps/s",
                GOAL,
                ratio=timing["ratio"],
                ours_label="EnvironmentLoop + gymnasium adapter",
                baseline_label="raw gymnasium loop",
            )
        ],
    )
    path = write_json("env_loop_overhead", finish(payload), *([args.out] if args.out else []))
    print_rows(payload["rows"])
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
