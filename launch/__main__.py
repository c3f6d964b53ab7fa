"""Command line: train an agent, in one process or as a distributed program, and print a one-line JSON summary.

    python -m launch --agent dqn --env CartPole-v1 --steps 100000 --seed 0 --run-dir runs/dqn
    python -m launch --agent dqn --env CartPole-v1 --launch local_mp --actors 2 --steps 100000 --run-dir runs/mp
    python -m launch --agent dqn --env CartPole-v1 --config learning_rate=5e-4 --config n_step=5
    python -m launch --resume runs/dqn             # continue a run from its latest checkpoint
    python -m launch --agent bc --dataset cartpole/expert-v0 --env CartPole-v1   # offline, from a Minari dataset
"""

import argparse
import json
import sys

import launch  # noqa: F401  (orders the JAX/TensorFlow imports before anything else)
from acmelike.checkpointing import CheckpointError
from launch.checkpoints import (
    DEFAULT_CHECKPOINT_MINUTES,
    RunOptions,
    read_run_options,
    resume_arguments,
    write_run_options,
)
from launch.distributed import LAUNCH_TYPES, DistributedRunError, run_distributed
from launch.registry import AGENTS, make_experiment_config
from launch.single_process import run_single_process


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m launch", description=__doc__.splitlines()[0])
    parser.add_argument("--agent", help=f"one of: {', '.join(sorted(AGENTS))}")
    parser.add_argument("--env", help="a gymnasium environment id, e.g. CartPole-v1")
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
        "--checkpoint-every", type=float, default=None, metavar="MINUTES",
        help=f"minutes between checkpoints of a run with --run-dir (default {DEFAULT_CHECKPOINT_MINUTES}; "
        "one is also written at every clean stop)",
    )
    parser.add_argument("--tensorboard", action="store_true", help="also write TensorBoard event files")
    parser.add_argument("--resume", metavar="RUN_DIR", help="continue the run in RUN_DIR from its latest checkpoint")
    parser.add_argument(
        "--dataset", metavar="ID", help="train an offline agent (bc, cql) on this local Minari dataset; "
        "--steps then counts learner steps",
    )
    args = parser.parse_args(argv)
    if args.dataset:
        return _run_offline(parser, args)
    options = _run_options(parser, args)
    if args.resume:
        _resume_into(parser, args)
    elif not (args.agent and args.env):
        parser.error("--agent and --env are required (or --resume RUN_DIR)")
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
        )
    except ValueError as error:
        parser.error(str(error))
    if args.launch == "single":
        try:
            summary = run_single_process(config, options)
        except CheckpointError as error:
            print(f"error: {error}", file=sys.stderr, flush=True)
            return 2
    else:
        if args.resume:
            parser.error("--resume continues single-process runs; a Launchpad program cannot resume yet")
        write_run_options(args.run_dir, options)  # the nodes read --tensorboard from it
        try:
            summary = run_distributed(config, num_actors=args.actors, launch_type=args.launch)
        except DistributedRunError as error:
            print(f"error: {error}", file=sys.stderr, flush=True)
            return 1
    print(json.dumps(summary), flush=True)
    return 0


def _run_offline(parser, args) -> int:
    from acmelike.offline import DatasetSpaceError
    from launch.offline import DEFAULT_EVALUATION_EVERY, make_offline_config, run_offline

    if not (args.agent and args.env):
        parser.error("--dataset needs --agent (bc or cql) and --env")
    try:
        config = make_offline_config(
            agent=args.agent, dataset=args.dataset, environment=args.env, learner_steps=args.steps, seed=args.seed,
            run_dir=args.run_dir, evaluation_every=args.eval_every or DEFAULT_EVALUATION_EVERY,
            stop_at_average_return=args.stop_at_return, config_overrides=args.config,
        )
        summary = run_offline(config)
    except (DatasetSpaceError, FileNotFoundError) as error:
        print(f"error: {error}", file=sys.stderr, flush=True)
        return 2
    except ValueError as error:
        parser.error(str(error))
    print(json.dumps(summary), flush=True)
    return 0


def _run_options(parser, args) -> RunOptions:
    saved = read_run_options(args.resume) if args.resume else RunOptions()
    try:
        return RunOptions(
            checkpoint_every_minutes=args.checkpoint_every or saved.checkpoint_every_minutes,
            tensorboard=args.tensorboard or saved.tensorboard,
            resume=bool(args.resume),
        )
    except ValueError as error:
        parser.error(str(error))


def _resume_into(parser, args) -> None:
    """Fills `args` from RUN_DIR/config.json; flags given on the command line must agree with it."""
    try:
        saved = resume_arguments(args.resume)
    except CheckpointError as error:
        parser.error(str(error))
    for flag, name, value in (("--agent", "agent", args.agent), ("--env", "environment", args.env)):
        if value is not None and value != saved[name]:
            parser.error(
                f"--resume {args.resume}: the run there is {saved[name]!r} ({args.resume}/config.json), not "
                f"{value!r} as {flag} says. Leave {flag} out to resume it, or choose a new --run-dir."
            )
    if args.run_dir is not None and args.run_dir != args.resume:
        parser.error("--resume RUN_DIR continues RUN_DIR: leave --run-dir out.")
    args.agent, args.env, args.seed, args.run_dir = saved["agent"], saved["environment"], saved["seed"], args.resume
    args.steps, args.eval_every = saved["max_num_actor_steps"], saved["evaluation_every"]
    args.stop_at_return, args.return_window = saved["stop_at_average_return"], saved["return_window"]
    args.config = saved["config_overrides"] + list(args.config)


if __name__ == "__main__":
    sys.exit(main())
