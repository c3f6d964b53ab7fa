"""Record policies' episodes into a local Minari dataset (the community's offline-RL format): one policy, or a mix.

    python -m launch.cli.record runs/dqn --episodes 50 --dataset-id cartpole/expert-v0
    python -m launch.cli.record runs/dqn --episodes 50 --dataset-id cartpole/noisy-v0 --epsilon 0.3
    python -m launch.cli.record --random --env CartPole-v1 --episodes 50 --dataset-id cartpole/random-v0
    python -m launch.cli.record --policy runs/dqn:10 --policy random:200 --dataset-id cartpole/mixed-v0

`--policy SOURCE:EPISODES[:EPSILON]` (repeatable) mixes policies into one dataset, recorded in the order given:
SOURCE is a run directory or snapshot, or `random` for uniformly random actions; EPSILON replaces each of that
policy's actions by a uniformly random one with that probability (`--epsilon` does the same for the one policy of
RUN_DIR). The environment is the snapshots' (they must agree), else `--env`. The dataset is written under Minari's
local directory (`MINARI_DATASETS_PATH`, default ~/.minari/datasets); nothing is uploaded or downloaded. An existing
dataset id is refused unless `--overwrite` replaces it.
"""

import argparse
import json
import os
import shutil
import sys
import warnings
from typing import List, NamedTuple, Optional, Sequence

import dm_env
import gymnasium
import numpy as np

from acmelike.checkpointing import CheckpointError
from acmelike.wrappers import check_environment_id_from_file, check_gymnasium_id
from launch.cli import description
from launch.lifecycle.snapshots import load_snapshot

RANDOM = "random"  # the --policy source of uniformly random actions


class Policy(NamedTuple):
    """One part of a dataset: `episodes` episodes of the snapshot in `run_dir` (None: uniformly random actions),
    each action replaced by a uniformly random one with probability `epsilon`."""

    episodes: int
    run_dir: Optional[str] = None
    epsilon: float = 0.0

    def text(self) -> str:
        """The part as `--policy` writes it."""
        epsilon = f":{self.epsilon:g}" if self.epsilon else ""
        return f"{self.run_dir or RANDOM}:{self.episodes}{epsilon}"


def parse_policy(text: str) -> Policy:
    """`SOURCE:EPISODES[:EPSILON]` -> a Policy; ValueError saying what is wrong and how to write it."""
    usage = "write SOURCE:EPISODES[:EPSILON], e.g. runs/dqn:80, random:20 or runs/dqn:50:0.3"
    source, episodes, epsilon = text, None, 0.0
    for fields in (text.rsplit(":", 2), text.rsplit(":", 1)):
        try:
            numbers = [int(fields[1])] + [float(field) for field in fields[2:]]
        except (IndexError, ValueError):
            continue
        source, episodes, epsilon = fields[0], numbers[0], (numbers[1:] or [0.0])[0]
        break
    if episodes is None or not source:
        raise ValueError(f"--policy {text!r}: {usage}.")
    if episodes < 1:
        raise ValueError(f"--policy {text!r}: episodes must be >= 1.")
    if not 0.0 <= epsilon <= 1.0:
        raise ValueError(f"--policy {text!r}: epsilon must be in [0, 1].")
    return Policy(episodes, None if source == RANDOM else source, epsilon)


def record(
    *,
    dataset_id: str,
    episodes: int,
    run_dir: Optional[str] = None,
    environment: Optional[str] = None,
    epsilon: float = 0.0,
    seed: int = 0,
    overwrite: bool = False,
) -> dict:
    """Records `episodes` episodes of the snapshot in `run_dir` (None: a uniformly random policy on
    `environment`): `record_mix` of that one policy."""
    return record_mix(dataset_id=dataset_id, policies=[Policy(episodes, run_dir, epsilon)], environment=environment,
                      seed=seed, overwrite=overwrite)


def record_mix(
    *,
    dataset_id: str,
    policies: Sequence[Policy],
    environment: Optional[str] = None,
    seed: int = 0,
    overwrite: bool = False,
) -> dict:
    """Records each policy's episodes, in order, into the one dataset `dataset_id` and returns {"dataset_id",
    "episodes", "steps", "mean_return", "path", "policies"}, "policies" giving each part's episodes and mean
    return. Episode k (counted over the whole dataset) starts from `env.reset(seed=seed + k)`.

    The environment is `environment`, else the snapshots' (ValueError if they name different ones, or if there is
    no snapshot and no `environment`). ValueError, before anything is recorded, if `dataset_id` exists and not
    `overwrite`."""
    import minari
    from minari import DataCollector

    if not policies:
        raise ValueError("Name at least one policy (RUN_DIR, --random or --policy).")
    for policy in policies:
        if policy.episodes < 1 or not 0.0 <= policy.epsilon <= 1.0:
            raise ValueError(f"{policy.text()}: episodes must be >= 1 and epsilon in [0, 1].")
    snapshots = [load_snapshot(policy.run_dir) if policy.run_dir else None for policy in policies]
    for snapshot in snapshots:
        if snapshot and snapshot.action_repeat > 1:  # a dataset's steps are single environment steps
            raise ValueError(
                f"The snapshot {snapshot.path} decided once every {snapshot.action_repeat} environment steps "
                f"(--action-repeat {snapshot.action_repeat}), and a dataset records every environment step with "
                f"the action the policy chose for it: record a policy trained without --action-repeat."
            )
    named = {snapshot.environment: snapshot.path for snapshot in snapshots if snapshot and snapshot.environment}
    if environment is None:
        if len(named) > 1:
            raise ValueError(f"The snapshots were trained on different environments ({', '.join(sorted(named))}): "
                             "record each on its own, or name one with --env.")
        if named:
            environment, path = next(iter(named.items()))
            check_environment_id_from_file(environment, f"The snapshot {path}")
    if environment is None:
        raise ValueError("Name the environment (--env) when recording without a snapshot.")
    check_gymnasium_id(environment)
    path = minari.storage.get_dataset_path(dataset_id)
    if os.path.exists(path):
        if not overwrite:
            raise ValueError(f"The local Minari dataset {dataset_id} exists ({path}): choose another --dataset-id, "
                             "or add --overwrite to replace it.")
        shutil.rmtree(path)
    env = DataCollector(gymnasium.make(environment))
    env.action_space.seed(seed)
    rng = np.random.default_rng(seed)
    parts: List[dict] = []
    returns: List[float] = []
    for policy, snapshot in zip(policies, snapshots):
        actor = snapshot.make_actor(seed) if snapshot else None
        part = [_episode(env, actor, policy.epsilon, rng, seed + len(returns) + k) for k in range(policy.episodes)]
        returns += part
        parts.append({"policy": policy.text(), "episodes": policy.episodes, "mean_return": float(np.mean(part))})
    with warnings.catch_warnings():  # minari asks for an author and a code link, for datasets it will publish
        warnings.filterwarnings("ignore", message="`(author|author_email|code_permalink)` is set to None")
        dataset = env.create_dataset(
            dataset_id=dataset_id,
            eval_env=environment,
            algorithm_name=" + ".join(_algorithm(policy, snapshot) for policy, snapshot in zip(policies, snapshots)),
            description=(f"{len(returns)} episodes of {environment} recorded by launch.cli.record, in this order: "
                         f"{', '.join(policy.text() for policy in policies)} (--policy SOURCE:EPISODES[:EPSILON])."),
        )
    env.close()
    return {
        "dataset_id": dataset_id, "episodes": int(dataset.total_episodes), "steps": int(dataset.total_steps),
        "mean_return": float(np.mean(returns)), "path": str(path), "policies": parts,
    }


def _episode(env, actor, epsilon: float, rng: np.random.Generator, reset_seed: int) -> float:
    """One episode of `actor` (None: random actions) on the collecting `env`; its return."""
    observation, _ = env.reset(seed=reset_seed)
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
    return total


def _algorithm(policy: Policy, snapshot) -> str:
    if snapshot is None:
        return f"uniform random ({policy.episodes} episodes)"
    return f"acmelike {snapshot.agent} snapshot (epsilon {policy.epsilon:g}, {policy.episodes} episodes)"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m launch.cli.record", description=description(__doc__))
    parser.add_argument("run_dir", nargs="?", help="a run directory (or snapshot) whose policy acts")
    parser.add_argument("--random", action="store_true", help="record a uniformly random policy instead")
    parser.add_argument("--policy", action="append", default=[], metavar="SOURCE:EPISODES[:EPSILON]",
                        help="one part of a mixed dataset (repeatable, recorded in order): SOURCE is a run directory "
                             "or snapshot, or 'random'; e.g. --policy runs/dqn:80 --policy random:20")
    parser.add_argument("--dataset-id", required=True, help="the Minari id to write, e.g. cartpole/expert-v0")
    parser.add_argument("--episodes", type=int, default=None,
                        help="episodes of RUN_DIR's (or --random's) policy; default 10")
    parser.add_argument("--epsilon", type=float, default=0.0,
                        help="the probability that RUN_DIR's policy takes a uniformly random action instead")
    parser.add_argument("--env", default=None, help="the environment id; default: the snapshots'")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--overwrite", action="store_true", help="replace the dataset if the id exists")
    args = parser.parse_args(argv)
    if args.policy:
        if args.run_dir or args.random or args.episodes is not None or args.epsilon:
            parser.error("--policy names every part of the dataset: drop RUN_DIR, --random, --episodes and "
                         "--epsilon, or drop --policy")
        try:
            policies = [parse_policy(text) for text in args.policy]
        except ValueError as error:
            parser.error(str(error))
    else:
        if bool(args.run_dir) == args.random:
            parser.error("give either RUN_DIR or --random (or --policy, repeated, for a mix)")
        episodes = 10 if args.episodes is None else args.episodes
        if episodes < 1:
            parser.error(f"--episodes must be >= 1, got {episodes}")
        if not 0.0 <= args.epsilon <= 1.0:
            parser.error(f"--epsilon must be in [0, 1], got {args.epsilon}")
        policies = [Policy(episodes, args.run_dir, args.epsilon)]
    try:
        result = record_mix(dataset_id=args.dataset_id, policies=policies, environment=args.env, seed=args.seed,
                            overwrite=args.overwrite)
    except (CheckpointError, ValueError) as error:
        print(f"error: {error}", file=sys.stderr, flush=True)
        return 2
    print(json.dumps(result), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
