"""Command line: train an agent, in one process or as a distributed program, and print a one-line JSON summary.

    python -m launch --agent dqn --env CartPole-v1 --steps 100000 --seed 0 --run-dir runs/dqn
    python -m launch --agent dqn --env CartPole-v1 --launch local_mp --actors 2 --steps 100000 --run-dir runs/mp
    python -m launch --agent dqn --env CartPole-v1 --config learning_rate=5e-4 --config n_step=5
    python -m launch --agent ppo --env gymnax/CartPole-v1 --launch anakin --seeds 0-15 --steps 500000
    python -m launch --agent ppo --env CartPole-v1 --num-envs 8 --steps 100000
    python -m launch --agent dqn --env CartPole-v1 --launch local_mp --actors 4 --inference central --run-dir runs/seed
    python -m launch --resume runs/dqn             # continue a run from its latest checkpoint
    python -m launch --agent bc --dataset cartpole/expert-v0 --env CartPole-v1   # offline, from a Minari dataset

The last line of standard output is always the JSON summary alone. Every mistake on the command line is a parser
message (exit 2) naming the flag. Ctrl-C or SIGTERM ends the run cleanly: the summary says `"interrupted": true`
and the exit code is 130 (SIGINT) or 143 (SIGTERM); a node that fails exits 1.
"""

import argparse
import json
import signal
import sys

import launch  # noqa: F401  (orders the JAX/TensorFlow imports before anything else)
from acmelike.checkpointing import CheckpointError
from launch.engines.distributed.launcher import LAUNCH_TYPES, run_distributed
from launch.engines.distributed.supervisor import DistributedRunError
from launch.engines.single_process import run_single_process
from launch.experiments.config import INFERENCE_MODES
from launch.experiments.make import make_experiment_config
from launch.lifecycle.run_directory import (
    DEFAULT_CHECKPOINT_MINUTES,
    RunOptions,
    prepare_new_run_dir,
    read_run_options,
    resume_arguments,
)
from launch.registry import AGENTS


def _bounded(kind, minimum, strictly: bool = False):
    """An argparse type: `kind` values >= minimum (> if `strictly`); the parser names the flag in its message."""

    def parse(text: str):
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {kind.__name__}, got {text!r}") from None
        if value < minimum or (strictly and value == minimum):
            raise argparse.ArgumentTypeError(f"must be {'>' if strictly else '>='} {minimum}, got {text}")
        return value

    parse.__name__ = kind.__name__
    return parse


def make_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m launch", description=__doc__.splitlines()[0])
    parser.add_argument("--agent", help=f"one of: {', '.join(sorted(AGENTS))}")
    parser.add_argument("--env", help="a gymnasium environment id, e.g. CartPole-v1")
    parser.add_argument("--steps", type=_bounded(int, 1), default=100_000, help="environment steps to train for")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--run-dir", default=None, help="where config.json, CSV logs, learning_curve.png and summary.json go")
    parser.add_argument("--overwrite", action="store_true", help="replace what a non-empty --run-dir holds")
    parser.add_argument(
        "--config", action="append", default=[], metavar="FIELD=VALUE",
        help="set a field of the agent's config (repeatable), e.g. --config learning_rate=3e-4",
    )
    parser.add_argument("--eval-every", type=_bounded(int, 0), default=0, help="actor steps between evaluations (0: none)")
    parser.add_argument(
        "--target-return", type=float, default=None,
        help="the return that counts as solved, for environments gymnasium gives no reward_threshold",
    )
    parser.add_argument("--return-window", type=_bounded(int, 1), default=20, help="episodes averaged in the summary")
    parser.add_argument(
        "--progress-seconds", type=_bounded(float, 0.0, strictly=True), default=5.0, help="seconds between progress lines"
    )
    parser.add_argument(
        "--stop-at-return", type=float, default=None,
        help="stop early once the last --return-window episodes (distributed: an evaluation round) average at least this",
    )
    parser.add_argument(
        "--launch", default=None, choices=("single", "anakin") + LAUNCH_TYPES,
        help="single (the default): one process; local_mt / local_mp: a Launchpad program (threads / processes); "
        "anakin: fully jitted, for gymnax/<id> environments (launch/engines/anakin.py); ray: the same program as Ray actors "
        "(launch/engines/distributed/ray_engine.py). --resume: the run's own",
    )
    parser.add_argument(
        "--actors", type=_bounded(int, 1), default=None, help="actor nodes of a distributed program (default 1)"
    )
    parser.add_argument(
        "--ray-address", default=None, metavar="ADDR",
        help="--launch ray: join this Ray cluster (`ray start --head` prints it); default: start Ray on this machine",
    )
    parser.add_argument(
        "--ray-resources", default="", metavar="GROUP=RESOURCE[:AMOUNT],...",
        help="--launch ray: custom Ray resources each node of a group needs, e.g. actor=worker,learner=head",
    )
    parser.add_argument(
        "--ray-max-restarts", type=_bounded(int, 0), default=3, help="--launch ray: restarts of an actor whose process died",
    )
    parser.add_argument(
        "--num-envs", type=_bounded(int, 1), default=1,
        help="environments each actor steps together, with one batched policy call per step (default 1)",
    )
    parser.add_argument(
        "--inference", default="local", choices=INFERENCE_MODES,
        help="distributed runs: where actors' policy runs. local: in each actor; central: one inference node "
        "serves every actor in dynamic batches (SEED RL) and actors only step environments",
    )
    parser.add_argument("--seeds", default=None, help="anakin: seeds trained in one vmapped call, e.g. 0-15")
    parser.add_argument(
        "--checkpoint-every", type=_bounded(float, 0.0, strictly=True), default=None, metavar="MINUTES",
        help=f"minutes between checkpoints of a run with --run-dir (default {DEFAULT_CHECKPOINT_MINUTES}; "
        "one is also written at every clean stop)",
    )
    parser.add_argument("--tensorboard", action="store_true", help="also write TensorBoard event files")
    parser.add_argument("--resume", metavar="RUN_DIR", help="continue the run in RUN_DIR from its latest checkpoint")
    parser.add_argument(
        "--dataset", metavar="ID", help="train an offline agent (bc, cql) on this local Minari dataset; "
        "--steps then counts learner steps",
    )
    return parser


def main(argv=None) -> int:
    parser = make_parser()
    args = parser.parse_args(argv)
    if args.dataset:
        return _run_offline(parser, args)
    options = _run_options(parser, args)
    if args.resume:
        _resume_into(parser, args)
    elif not (args.agent and args.env):
        parser.error("--agent and --env are required (or --resume RUN_DIR)")
    elif args.run_dir:
        try:
            prepare_new_run_dir(args.run_dir, args.overwrite)
        except ValueError as error:
            parser.error(str(error))
    if args.inference == "central" and args.launch in ("single", "anakin"):
        parser.error(
            f"--inference central serves many actors from one inference node of a distributed program; --launch "
            f"{args.launch} has no such node. Use --launch local_mt, local_mp or ray (with --actors N), or drop --inference."
        )
    if args.launch == "anakin":
        from launch.engines.anakin import config_from_arguments, run_anakin

        try:
            anakin_config = config_from_arguments(args)
        except ValueError as error:
            parser.error(str(error))
        print(json.dumps(run_anakin(anakin_config)), flush=True)
        return 0
    if args.seeds:
        parser.error("--seeds is for --launch anakin (other runners take one --seed)")
    if args.launch != "single" and not args.run_dir:
        parser.error("--launch local_mt/local_mp needs --run-dir (node logs, progress and failures go there)")
    if args.launch != "single" and args.stop_at_return is not None and not args.eval_every:
        parser.error("--stop-at-return in a distributed run needs --eval-every > 0: evaluation rounds decide the stop")
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
            inference=args.inference,
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
        try:
            summary = run_distributed(
                config, num_actors=args.actors, launch_type=args.launch, options=options,
                ray_options=_ray_options(parser, args),
            )
        except CheckpointError as error:
            print(f"error: {error}", file=sys.stderr, flush=True)
            return 2
        except DistributedRunError as error:
            print(f"error: {error}", file=sys.stderr, flush=True)
            return 1
    print(json.dumps(dict(summary)), flush=True)
    if summary.get("interrupted"):
        return 128 + signal.Signals[summary["signal"]].value
    return 0


def _run_offline(parser, args) -> int:
    from acmelike.offline import DatasetSpaceError
    from launch.engines.offline import DEFAULT_EVALUATION_EVERY, make_offline_config, run_offline

    if not (args.agent and args.env):
        parser.error("--dataset needs --agent (bc, cql or cql_continuous) and --env")
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


def _ray_options(parser, args):
    """--ray-* flags as `RayOptions` for --launch ray (None otherwise; those flags then are a mistake)."""
    given = [flag for flag, value in (("--ray-address", args.ray_address), ("--ray-resources", args.ray_resources))
             if value]
    if args.launch != "ray":
        if given:
            parser.error(f"{given[0]} is for --launch ray")
        return None
    from launch.engines.distributed.ray_engine import RayOptions, parse_resources

    try:
        return RayOptions(args.ray_address, parse_resources(args.ray_resources), args.ray_max_restarts)
    except ValueError as error:
        parser.error(f"--ray-resources: {error}")


def _run_options(parser, args) -> RunOptions:
    saved = read_run_options(args.resume) if args.resume else RunOptions()
    if args.resume and args.launch and (args.launch == "single") != (saved.launch == "single"):
        parser.error(
            f"--resume {args.resume}: that run was launched with --launch {saved.launch}, and its checkpoints "
            f"hold what that runner saves: leave --launch out to resume it as it was launched."
        )
    args.launch, args.actors = args.launch or saved.launch, args.actors or saved.actors
    try:
        return RunOptions(
            checkpoint_every_minutes=args.checkpoint_every or saved.checkpoint_every_minutes,
            tensorboard=args.tensorboard or saved.tensorboard,
            resume=bool(args.resume),
            launch=args.launch,
            actors=args.actors,
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
