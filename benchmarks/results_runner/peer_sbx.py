"""A peer check for the mujoco suite: SBX's SAC or TD3 (Stable-Baselines3 in JAX), trained and evaluated the way a
results cell is, so that ours under the same settings can be set beside a second implementation (the mujoco
suite's notes cite it).

It runs in the SBX venv of `make bench`, with the mujoco extra's packages added:

    make .venv-bench/.installed
    .venv-bench/bin/pip install -c constraints-latest.txt mujoco imageio packaging
    .venv-bench/bin/python benchmarks/results_runner/peer_sbx.py --agent sac --env HalfCheetah-v5 --seed 0
    .venv-bench/bin/python benchmarks/results_runner/peer_sbx.py --agent td3 --env HalfCheetah-v5 --seed 0

Settings (`SETTINGS`):
  sac: rl-baselines3-zoo's MuJoCo settings (hyperparams/sac.yml): SB3's SAC defaults (learning rate 3e-4, the
       temperature learned from 1, batch 256, buffer 1e6, tau 0.005, gamma 0.99, [256, 256], one SGD step per
       environment step) with learning_starts 10000, during which SB3 acts uniformly at random.
  td3: our mujoco preset's TD3 entry, Tianshou's examples/mujoco/mujoco_td3.py: learning rate 3e-4, batch 256,
       buffer 1e6, tau 0.005, gamma 0.99, [256, 256], Gaussian exploration noise 0.1, target smoothing 0.2
       clipped at 0.5, policy delay 2, one SGD step per environment step, 25,000 uniformly random actions first.
Prints and writes (JSON, `--out`) the training episodes' returns, the average of the last 10 at the end, and the
final policy's deterministic return over 10 episodes seeded from 100, as
`python -m launch.cli.evaluate RUN --episodes 10 --seed 100` measures ours.
"""

import argparse
import json
import os
import time

import gymnasium
import numpy as np
from stable_baselines3.common.monitor import Monitor

EVAL_SEED = 100

SETTINGS = {
    "sac": "rl-baselines3-zoo mujoco (SB3 defaults, learning_starts 10000)",
    "td3": "the mujoco preset's (Tianshou's mujoco_td3.py: lr 3e-4, noise 0.1, learning_starts 25000, [256, 256])",
}


def make_model(agent: str, env, seed: int):
    if agent == "sac":
        from sbx import SAC
        return SAC("MlpPolicy", env, learning_starts=10_000, seed=seed, verbose=0)
    from sbx import TD3
    from stable_baselines3.common.noise import NormalActionNoise
    preset = mujoco_preset("td3")  # read, not copied, so the peer cannot drift from the cells it is set beside
    if preset["policy_learning_rate"] != preset["critic_learning_rate"] or (
            preset["policy_hidden_sizes"] != preset["critic_hidden_sizes"]):
        raise ValueError("SBX's TD3 takes one learning rate and one net_arch; the mujoco preset's TD3 has two.")
    size = env.action_space.shape[0]
    noise = preset["exploration_noise"]
    return TD3(  # smoothing 0.2 clipped at 0.5 and policy delay 2: TD3Config's defaults, which the preset keeps
        "MlpPolicy", env, learning_rate=preset["policy_learning_rate"], buffer_size=preset["max_replay_size"],
        learning_starts=preset["random_warmup_steps"], batch_size=preset["batch_size"], tau=preset["tau"],
        gamma=preset["discount"], train_freq=1, gradient_steps=1, policy_delay=2, target_policy_noise=0.2,
        target_noise_clip=0.5, action_noise=NormalActionNoise(np.zeros(size), np.full(size, noise)),
        policy_kwargs={"net_arch": list(preset["policy_hidden_sizes"])}, seed=seed, verbose=0,
    )


def mujoco_preset(agent: str) -> dict:
    """`agent`'s config in launch/presets/mujoco.json (plain JSON: the SBX venv need not import acmelike)."""
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    with open(os.path.join(root, "launch", "presets", "mujoco.json")) as f:
        return json.load(f)["agents"][agent]["config"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agent", choices=sorted(SETTINGS), default="sac")
    parser.add_argument("--env", default="HalfCheetah-v5")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--steps", type=int, default=100_000)
    parser.add_argument("--eval-episodes", type=int, default=10)
    parser.add_argument("--out", default=None,
                        help="default: benchmarks/results/peer_sbx_<agent>_<env>_seed<seed>.json")
    args = parser.parse_args()
    out = args.out or os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "results",
                                   f"peer_sbx_{args.agent}_{args.env}_seed{args.seed}.json")

    env = Monitor(gymnasium.make(args.env))
    model = make_model(args.agent, env, args.seed)
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

    result = {"library": "sbx", "agent": args.agent, "settings": SETTINGS[args.agent], "env": args.env,
              "seed": args.seed, "steps": args.steps, "wall_seconds": round(wall, 1),
              "final_average_return_last_10": float(np.mean(returns[-10:])), "greedy_returns": greedy,
              "greedy_mean_return": float(np.mean(greedy)), "episode_returns": returns}
    os.makedirs(os.path.dirname(out), exist_ok=True)
    with open(out, "w") as f:
        json.dump(result, f, indent=1)
    print(f"SBX {args.agent.upper()} {args.env} seed {args.seed}: last-10 average "
          f"{result['final_average_return_last_10']:.1f}, deterministic {result['greedy_mean_return']:.1f} over "
          f"{args.eval_episodes} episodes, {wall:.0f} s; wrote {out}")


if __name__ == "__main__":
    main()
