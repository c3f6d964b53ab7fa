"""Command line: train an agent, in one process or as a distributed program, and print a one-line JSON summary.

    python -m launch --agent dqn --env CartPole-v1 --steps 100000 --seed 0 --run-dir runs/dqn
    python -m launch --agent dqn --env CartPole-v1 --launch local_mp --actors 2 --steps 100000 --run-dir runs/mp
    python -m launch --agent dqn --env CartPole-v1 --config learning_rate=5e-4 --config n_step=5
    python -m launch --agent ppo --env CartPole-v1 --num-envs 8 --steps 100000
"""

import argparse
import json
import sys

import launch  # noqa: F401  (orders the JAX/TensorFlow imports before anything else)
from launch.distributed import LAUNCH_TYPES, DistributedRunError, run_distributed
from launch.registry import AGENTS, make_experiment_config
from launch.single_process import run_single_process


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m launch", description=__doc__.splitlines()[0])
    parser.add_argument("--agent", required=True, help=f"one of: {', '.join(sorted(AGENTS))}")
    parser.add_argument("--env", required=True, help="a gymnasium environment id, e.g. CartPole-v1")
    parser.add_argument("--steps", type=int, default=100_000, help="environment steps to train for")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--run-dir", default=None, help="where CSV logs, learning_curve.png and summary.json go")
    parser.add_argument(
        "--config", action="append", default=[], metavar="FIELD=VALUE",
        help="set a field of the agent's config (repeatable), e.g. --config learning_rate=3e-4",
    )
    parser.add_argument("--eval-every", type=int, default=0, help="actor steps between evaluations (0: none)")
    parser.add_argument(
        "--target-return", type=float, default=None,
        help="the return that counts as solved, for environments gymnasium gives no reward_threshold",
    )
    parser.add_argument("--return-window", type=int, default=20, help="episodes averaged in the summary")
    parser.add_argument("--progress-seconds", type=float, default=5.0, help="seconds between progress lines")
    parser.add_argument(
        "--stop-at-return", type=float, default=None,
        help="stop early once the last 20 episodes (distributed: an evaluation round) average at least this",
    )
    parser.add_argument(
        "--launch", default="single", choices=("single",) + LAUNCH_TYPES,
        help="single: one process; local_mt / local_mp: a Launchpad program (threads / processes)",
    )
    parser.add_argument("--actors", type=int, default=1, help="actor nodes of a distributed program")
    parser.add_argument(
        "--num-envs", type=int, default=1,
        help="environments each actor steps together, with one batched policy call per step (default 1)",
    )
    args = parser.parse_args(argv)
    if args.launch != "single" and not args.run_dir:
        parser.error("--launch local_mt/local_mp needs --run-dir (node logs, progress and failures go there)")
    try:
        config = make_experiment_config(
            agent=args.agent,
            environment=args.env,
            max_num_actor_steps=args.steps,
            seed=args.seed,
            run_dir=args.run_dir,
            evaluation_every=args.eval_every,
            progress_period_s=args.progress_seconds,
            stop_at_average_return=args.stop_at_return,
            config_overrides=args.config,
            target_return=args.target_return,
            return_window=args.return_window,
            num_envs=args.num_envs,
        )
    except ValueError as error:
        parser.error(str(error))
    if args.launch == "single":
        summary = run_single_process(config)
    else:
        try:
            summary = run_distributed(config, num_actors=args.actors, launch_type=args.launch)
        except DistributedRunError as error:
            print(f"error: {error}", file=sys.stderr, flush=True)
            return 1
    print(json.dumps(summary), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
