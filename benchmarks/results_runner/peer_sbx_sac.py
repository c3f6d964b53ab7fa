"""A peer check for the mujoco suite's SAC: SBX's SAC (Stable-Baselines3 in JAX) with rl-baselines3-zoo's MuJoCo
settings, trained and evaluated the way a results cell is, so that our SAC under the same settings can be set
beside a second implementation (the mujoco suite's notes cite it).

It runs in the SBX venv of `make bench`, with the mujoco extra's packages added:

    make .venv-bench/.installed
    .venv-bench/bin/pip install -c constraints-latest.txt mujoco imageio packaging
    .venv-bench/bin/python benchmarks/results_runner/peer_sbx_sac.py --env HalfCheetah-v5 --seed 0

The zoo's settings (hyperparams/sac.yml, mujoco): SB3's SAC defaults (learning rate 3e-4, the temperature learned
from 1, batch 256, buffer 1e6, tau 0.005, gamma 0.99, [256, 256], one SGD step per environment step) with
learning_starts 10000, during which SB3 acts uniformly at random. Prints and writes (JSON, `--out`) the training
episodes' returns, the average of the last 10 at the end, and the final policy's deterministic return over 10
episodes seeded from 100, as `python -m launch.cli.evaluate RUN --episodes 10 --seed 100` measures ours.
"""

import argparse
import json
import os
import time

import gymnasium
import numpy as np
from sbx import SAC
from stable_baselines3.common.monitor import Monitor

EVAL_SEED = 100


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--env", default="HalfCheetah-v5")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--steps", type=int, default=100_000)
    parser.add_argument("--eval-episodes", type=int, default=10)
    parser.add_argument("--out", default=None, help="default: benchmarks/results/peer_sbx_sac_<env>_seed<seed>.json")
    args = parser.parse_args()
    out = args.out or os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "results",
                                   f"peer_sbx_sac_{args.env}_seed{args.seed}.json")

    env = Monitor(gymnasium.make(args.env))
    model = SAC("MlpPolicy", env, learning_starts=10_000, seed=args.seed, verbose=0)
    start = time.time()
    model.learn(total_timesteps=args.steps, progress_bar=False)
    wall = time.time() - start
    returns = [float(value) for value in env.get_episode_rewards()]

    evaluation = gymnasium.make(args.env)
    greedy = []
    for episode in range(args.eval_episodes):
        observation, _ = evaluation.reset(seed=EVAL_SEED + episode)
        total, done = 0.0, False
        while not done:
            action, _ = model.predict(observation, deterministic=True)
            observation, reward, terminated, truncated, _ = evaluation.step(action)
            total, done = total + float(reward), terminated or truncated
        greedy.append(total)

    result = {"library": "sbx", "agent": "sac", "settings": "rl-baselines3-zoo mujoco (SB3 defaults, "
              "learning_starts 10000)", "env": args.env, "seed": args.seed, "steps": args.steps,
              "wall_seconds": round(wall, 1), "final_average_return_last_10": float(np.mean(returns[-10:])),
              "greedy_returns": greedy, "greedy_mean_return": float(np.mean(greedy)), "episode_returns": returns}
    os.makedirs(os.path.dirname(out), exist_ok=True)
    with open(out, "w") as f:
        json.dump(result, f, indent=1)
    print(f"SBX SAC {args.env} seed {args.seed}: last-10 average {result['final_average_return_last_10']:.1f}, "
          f"deterministic {result['greedy_mean_return']:.1f} over {args.eval_episodes} episodes, {wall:.0f} s; "
          f"wrote {out}")


if __name__ == "__main__":
    main()
