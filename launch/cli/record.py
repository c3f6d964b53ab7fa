"""Record a snapshot policy's episodes into a local Minari dataset (the community's offline-RL format).

    python -m launch.cli.record runs/dqn --episodes 50 --dataset-id cartpole/expert-v0
    python -m launch.cli.record runs/dqn --episodes 50 --dataset-id cartpole/noisy-v0 --epsilon 0.3
    python -m launch.cli.record --random --env CartPole-v1 --episodes 50 --dataset-id cartpole/random-v0

The dataset is written under Minari's local directory (`MINARI_DATASETS_PATH`, default ~/.minari/datasets);
nothing is uploaded or downloaded. `--epsilon` replaces each action by a uniformly random one with that probability.
"""

import argparse
import json
import sys
from typing import Optional

import dm_env
import gymnasium
import numpy as np

from acmelike.checkpointing import CheckpointError
from acmelike.wrappers import check_environment_id_from_file, check_gymnasium_id
from launch.lifecycle.snapshots import load_snapshot


def record(
    *,
    dataset_id: str,
    episodes: int,
    run_dir: Optional[str] = None,
    environment: Optional[str] = None,
    epsilon: float = 0.0,
    seed: int = 0,
) -> dict:
    """Records `episodes` episodes of the snapshot in `run_dir` (None: a uniformly random policy on
    `environment`) and returns {"dataset_id", "episodes", "steps", "mean_return", "path"}."""
    import minari
    from minari import DataCollector

    if not 0.0 <= epsilon <= 1.0:
        raise ValueError(f"--epsilon must be in [0, 1], got {epsilon}.")
    actor = None
    if run_dir is not None:
        snapshot = load_snapshot(run_dir)
        if environment is None and snapshot.environment is not None:
            environment = snapshot.environment
            check_environment_id_from_file(environment, f"The snapshot {snapshot.path}")
        actor = snapshot.make_actor(seed)
    if environment is None:
        raise ValueError("Name the environment (--env) when recording without a snapshot.")
    check_gymnasium_id(environment)
    env = DataCollector(gymnasium.make(environment))
    env.action_space.seed(seed)
    rng = np.random.default_rng(seed)
    returns = []
    for episode in range(episodes):
        observation, _ = env.reset(seed=seed + episode)
        if actor is not None:
            actor.observe_first(dm_env.restart(np.asarray(observation, np.float32)))
        done, total = False, 0.0
        while not done:
            if actor is None or rng.uniform() < epsilon:
                action = env.action_space.sample()
            else:
                action = actor.select_action(np.asarray(observation, np.float32))
                action = int(action) if np.ndim(action) == 0 else np.asarray(action)
            observation, reward, terminated, truncated, _ = env.step(action)
            total += float(reward)
            done = terminated or truncated
        returns.append(total)
    dataset = env.create_dataset(
        dataset_id=dataset_id,
        eval_env=environment,
        algorithm_name=f"acmelike {snapshot.agent} snapshot (epsilon {epsilon})" if actor else "uniform random",
        description=f"{episodes} episodes of {environment} recorded by launch.cli.record from {run_dir or 'random'}.",
    )
    env.close()
    return {
        "dataset_id": dataset_id, "episodes": int(dataset.total_episodes), "steps": int(dataset.total_steps),
        "mean_return": float(np.mean(returns)), "path": str(minari.storage.get_dataset_path(dataset_id)),
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m launch.cli.record", description=__doc__.splitlines()[0])
    parser.add_argument("run_dir", nargs="?", help="a run directory (or snapshot) whose policy acts")
    parser.add_argument("--random", action="store_true", help="record a uniformly random policy instead")
    parser.add_argument("--dataset-id", required=True, help="Minari id, e.g. cartpole/expert-v0")
    parser.add_argument("--episodes", type=int, default=10)
    parser.add_argument("--epsilon", type=float, default=0.0, help="probability of a random action")
    parser.add_argument("--env", default=None, help="environment id (default: the snapshot's)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    if bool(args.run_dir) == args.random:
        parser.error("give either RUN_DIR or --random")
    if args.episodes < 1:
        parser.error(f"--episodes must be >= 1, got {args.episodes}")
    try:
        result = record(dataset_id=args.dataset_id, episodes=args.episodes, run_dir=args.run_dir,
                        environment=args.env, epsilon=args.epsilon, seed=args.seed)
    except (CheckpointError, ValueError) as error:
        print(f"error: {error}", file=sys.stderr, flush=True)
        return 2
    print(json.dumps(result), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
