"""Command line: train an agent, in one process, offline, fully jitted or as a distributed program, and print a
one-line JSON summary.

    python -m launch --agent dqn --env CartPole-v1 --steps 100000 --seed 0 --run-dir runs/dqn
    python -m launch --agent dqn --env CartPole-v1 --launch local_mp --actors 2 --steps 100000 --run-dir runs/mp
    python -m launch --agent dqn --env CartPole-v1 --config learning_rate=5e-4 --config n_step=5
    python -m launch --agent ppo --env gymnax/CartPole-v1 --launch anakin --seeds 0-15 --steps 500000
    python -m launch --agent ppo --env CartPole-v1 --num-envs 8 --steps 100000
    python -m launch --agent dqn --env CartPole-v1 --launch local_mp --actors 4 --inference central --run-dir runs/seed
    python -m launch --resume runs/dqn             # continue a run from its latest checkpoint
    python -m launch --agent bc --dataset cartpole/expert-v0 --env CartPole-v1 --run-dir runs/bc   # offline
    python -m launch --agent sac --list-config     # every field --config can set: type, default, meaning

`plan(argv)` parses and checks the command line and builds the run's config without running anything; `main`
runs the plan. Each flag works with the launches `launch.cli.flags.FLAGS` names (single, local_mt, local_mp, ray,
anakin, offline); given with another it is refused. Every mistake on the command line is a parser message
(exit 2) naming the flag. The last line of standard output is always the JSON summary alone. Ctrl-C or SIGTERM
ends the run cleanly: the summary says `"interrupted": true` and the exit code is 130 (SIGINT) or 143 (SIGTERM).
Any error that ends a run, with any launch (a NaN loss, a full disk, a node that fails), ends it with a summary that
says `"failed": true` and the error (`launch.experiments.summaries.failed_summary`), and exit 1; so does a final
save that fails (the summary's `failures`, and `<run_dir>/failures/`). One process at a time runs a run directory
(`RunDirectoryLock`): a second one exits 2, naming the first's pid.
"""

import argparse
import dataclasses
import json
import os
import signal
import sys
import time
from typing import Any, Dict, FrozenSet, NamedTuple, Optional, Sequence, Tuple

import launch  # noqa: F401  (orders the JAX/TensorFlow imports before anything else)
from acmelike import compilation_cache
from acmelike.checkpointing import CheckpointError
from acmelike.wrappers import check_environment_id_from_file
from launch.cli import description
from launch.cli.flags import DISTRIBUTED, FLAGS, refusal
from launch.cli.packages import missing_package
from launch.engines import bind_address
from launch.engines.anakin import config_from_arguments, is_anakin_run, read_anakin_config
from launch.engines.distributed.launchpad_engine import check_launchpad_bind_address
from launch.engines.distributed.ray_engine import RayOptions, parse_resources
from launch.engines.distributed.supervisor import DistributedRunError
from launch.engines.train import train
from launch.experiments.config import INFERENCE_MODES, MAX_SEED, REPLAY_KINDS, OfflineExperimentConfig
from launch.experiments.make import make_agent_config, make_experiment_config, make_offline_experiment_config
from launch.experiments.overrides import format_config_fields
from launch.experiments.presets import preset_values
from launch.experiments.presets import preset_names
from launch.experiments.summaries import failed_summary
from launch.lifecycle.run_directory import (
    DEFAULT_CHECKPOINT_MINUTES,
    RunDirectoryRefused,
    RunOptions,
    check_new_run_dir,
    check_run_directory,
    read_run_options,
    resume_arguments,
)
from launch.registry import AGENTS, agent_definition, offline_agents


def _bounded(kind, minimum, strictly: bool = False, maximum=None):
    """An argparse type: `kind` values >= minimum (> if `strictly`), and <= maximum if given; the parser names the
    flag in its message."""

    def parse(text: str):
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {kind.__name__}, got {text!r}") from None
        if value < minimum or (strictly and value == minimum):
            raise argparse.ArgumentTypeError(f"must be {'>' if strictly else '>='} {minimum}, got {text}")
        if maximum is not None and value > maximum:
            raise argparse.ArgumentTypeError(f"must be <= {maximum}, got {text}")
        return value

    parse.__name__ = kind.__name__
    return parse


class FlagParser(argparse.ArgumentParser):
    """An ArgumentParser whose namespace holds only the flags given on the command line (each is added with
    `default=argparse.SUPPRESS`), so a default value is never mistaken for a flag given with the wrong launch.

    Attributes:
      defaults: attribute -> the value a flag left out takes.
      dests: flag -> its attribute.
    """

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.defaults: Dict[str, Any] = {}
        self.dests: Dict[str, str] = {}

    def add_flag(self, flag: str, default: Any = None, **kwargs) -> None:
        if flag not in FLAGS:
            raise KeyError(f"{flag} has no row in launch.cli.flags.FLAGS: say there with which launches it works.")
        action = self.add_argument(flag, default=argparse.SUPPRESS, **kwargs)
        self.defaults[action.dest] = default
        self.dests[flag] = action.dest

    def read(self, argv: Optional[Sequence[str]]) -> Tuple[argparse.Namespace, FrozenSet[str]]:
        """(every flag's value, given or default; the flags given)."""
        given = vars(self.parse_args(argv))
        flags = frozenset(flag for flag, dest in self.dests.items() if dest in given)
        return argparse.Namespace(**{**self.defaults, **given}), flags


def make_parser() -> FlagParser:
    parser = FlagParser(prog="python -m launch", description=description(__doc__))
    add = parser.add_flag
    add("--agent", help=f"one of: {', '.join(sorted(AGENTS))}")
    add("--env", help="a gymnasium environment id, e.g. CartPole-v1; dm_control/<domain>-<task> for the DeepMind "
                       "Control Suite, e.g. dm_control/walker-walk; mpe/<name> for multi-agent agents (anakin: "
                       "gymnax/<id>, brax/<task> for continuous agents, or jaxmarl/<id> for multi-agent agents). A "
                       "module:Env-v0 id makes gymnasium import the module, so it is taken only as typed here, never "
                       "read back from a run directory")
    add("--steps", 100_000, type=_bounded(int, 1),
        help="environment steps to train for (offline: learner steps); default 100000")
    add("--seed", 0, type=_bounded(int, 0, maximum=MAX_SEED),
        help=f"0 to {MAX_SEED} (JAX's PRNGKey keeps 32 bits of a seed); default 0")
    add("--run-dir", help="where config.json, CSV logs, learning_curve.png, checkpoints and summary.json go; a "
                          "non-empty one needs --overwrite, and one process at a time runs it (a second exits 2)")
    add("--overwrite", False, action="store_true", help="replace what a non-empty --run-dir holds")
    add("--config", [], action="append", metavar="FIELD=VALUE",
        help="set a field of the agent's config (repeatable), e.g. --config learning_rate=3e-4 (--list-config "
             "lists them)")
    add("--preset", metavar="NAME",
        help=f"start the agent's config from a preset's per-task hyperparameters (launch/presets/NAME.json: "
             f"{', '.join(preset_names())}); --config overrides win over it, and --resume keeps it")
    add("--eval-every", type=_bounded(int, 0),
        help="actor steps (offline: learner steps) between evaluations; 0: no evaluator. Default: 0 online, "
             f"{OfflineExperimentConfig.evaluation_every} offline")
    add("--target-return", type=float,
        help="the return that counts as solved (default: gymnasium's reward_threshold for --env, if it has one)")
    add("--return-window", 20, type=_bounded(int, 1),
        help="episodes averaged in the summary (offline: evaluation episodes); default 20 "
             f"(offline {OfflineExperimentConfig.return_window})")
    add("--progress-seconds", 5.0, type=_bounded(float, 0.0, strictly=True),
        help="seconds between progress lines; default 5")
    add("--stop-at-return", type=float,
        help="stop early once the last --return-window episodes (distributed and offline: an evaluation round, "
             "with --eval-every > 0) average at least this")
    add("--launch", choices=("single", "anakin") + DISTRIBUTED,
        help="single (the default): one process; local_mt / local_mp: a Launchpad program (threads / processes); "
             "anakin: fully jitted, for gymnax/<id> (jaxmarl/<id>) environments (launch/engines/anakin.py); "
             "ray: the same program as Ray actors (launch/engines/distributed/ray_engine.py). With --resume, the "
             "default is the run's own launch")
    add("--actors", type=_bounded(int, 1), help="actor nodes of a distributed program (default 1)")
    add("--ray-address", metavar="ADDR",
        help="--launch ray: join this Ray cluster (`ray start --head` prints it); default: start Ray on this machine")
    add("--bind-address", metavar="ADDR",
        help="the address every server of the run listens on (Reverb, Launchpad's nodes, a local Ray; single: "
             "with --replay reverb): default 127.0.0.1, this machine only, or with --ray-address the address this "
             "machine reaches the cluster from; 0.0.0.0: every interface (local_mt and local_mp take these two "
             "only). --resume never reads it from the run directory (docs/runs.md, 'What a run exposes')")
    add("--ray-resources", "", metavar="GROUP=RESOURCE[:AMOUNT],...",
        help="--launch ray: custom Ray resources each node of a group needs, e.g. actor=worker,learner=head")
    add("--ray-max-restarts", 3, type=_bounded(int, 0),
        help="--launch ray: restarts of an actor whose process died (default 3)")
    add("--num-envs", type=_bounded(int, 1),
        help="environments each actor steps together, with one batched policy call per step (default 1)")
    add("--inference", choices=INFERENCE_MODES,
        help="distributed runs: where actors' policy runs. local (the default): in each actor; central: one "
             "inference node serves every actor in dynamic batches (SEED RL) and actors only step environments")
    add("--replay", choices=REPLAY_KINDS,
        help="single process: local (the default) serves the agent's tables in-process with seeded, synchronous "
             "sampling, so the same --seed gives a bit-identical run (and imports no TensorFlow); reverb runs an "
             "embedded Reverb server, as Launchpad programs use (not repeatable). ray: local (the default) has the "
             "replay node serve the local tables; reverb makes it a Reverb server (the classic stack)")
    add("--seeds", help="anakin: seeds trained in one vmapped call, e.g. 0-15")
    add("--checkpoint-every", type=_bounded(float, 0.0, strictly=True), metavar="MINUTES",
        help=f"minutes between checkpoints of a run with --run-dir (default {DEFAULT_CHECKPOINT_MINUTES}; "
             "one is also written at every clean stop)")
    add("--tensorboard", False, action="store_true", help="also write TensorBoard event files (needs --run-dir)")
    add("--resume", metavar="RUN_DIR",
        help="continue the run in RUN_DIR from its latest checkpoint, launched as it was")
    add("--dataset", metavar="ID",
        help=f"train an offline agent ({', '.join(offline_agents())}) on this local Minari dataset; --steps then "
             "counts learner steps")
    add("--compilation-cache", metavar="DIR|off",
        help="keep compiled XLA executables in DIR, so the next run of the same agent pays no compile; off: "
             "compile every time. Default: $ACMELIKE_COMPILATION_CACHE, else ~/.cache/acmelike/jax "
             "(acmelike/compilation_cache.py)")
    add("--list-config", False, action="store_true",
        help="list every field of --agent's config (type, default, meaning) and exit")
    missing = sorted(set(FLAGS) - set(parser.dests))
    if missing:
        raise KeyError(f"launch.cli.flags.FLAGS has rows for flags the parser lacks: {', '.join(missing)}.")
    return parser


@dataclasses.dataclass(frozen=True)
class RunPlan:
    """A checked command line, ready to run: `plan` builds it, `main` runs it.

    Attributes:
      config: the launch's config: `ExperimentConfig` (single, local_mt, local_mp, ray), `OfflineExperimentConfig`
        (offline) or `AnakinConfig` (anakin); None for a listing.
      options: the launch (one of `launch.cli.flags.LAUNCHES`, as the summary's `launch` records it), checkpoints,
        TensorBoard, resume and actors (an Anakin run's checkpoints and TensorBoard are in its config).
      ray_options: `RayOptions` for --launch ray, else None.
      overwrite: clear the new run's directory before running (--overwrite).
      listing: --list-config: the text to print instead of running.
      compilation_cache: --compilation-cache: a directory, "off", or None for the default directory.
    """

    config: Any = None
    options: RunOptions = RunOptions()
    ray_options: Optional[RayOptions] = None
    overwrite: bool = False
    listing: Optional[str] = None
    compilation_cache: Optional[str] = None

    @property
    def launch(self) -> str:
        return self.options.launch


class _SavedRun(NamedTuple):
    """A run directory to resume: the config function's arguments (`resume_arguments`) and its `RunOptions`."""

    arguments: Dict[str, Any]
    options: RunOptions

    @property
    def launch(self) -> str:
        return "offline" if "dataset" in self.arguments else self.options.launch


# Flags that set an argument of make_experiment_config (online) or make_offline_experiment_config (offline), whose
# keywords are public (README, docs) and so keep their names.
_SHARED_ARGUMENTS = {
    "--agent": "agent", "--env": "environment", "--seed": "seed", "--run-dir": "run_dir",
    "--config": "config_overrides", "--eval-every": "evaluation_every", "--target-return": "target_return",
    "--return-window": "return_window", "--progress-seconds": "progress_period_s",
    "--stop-at-return": "stop_at_average_return",
}
_ONLINE_ARGUMENTS = {**_SHARED_ARGUMENTS, "--steps": "max_num_actor_steps", "--num-envs": "num_envs",
                     "--inference": "inference", "--replay": "replay", "--preset": "preset"}
_OFFLINE_ARGUMENTS = {**_SHARED_ARGUMENTS, "--steps": "max_num_learner_steps", "--dataset": "dataset"}
# What names a run: given with --resume, these must be the run's own.
# --replay too: a checkpoint holds the replay in its own format; --preset: the run's config started from it.
_IDENTITY = ("--agent", "--env", "--seed", "--dataset", "--replay", "--preset")


def plan(argv: Optional[Sequence[str]] = None) -> RunPlan:
    """Parses and checks `argv` and builds the run's config, without training or writing anything. Every
    mistake is a parser error: SystemExit(2), with a message on stderr naming the flag."""
    parser = make_parser()
    args, given = parser.read(argv)
    if args.resume and is_anakin_run(args.resume):
        return _plan_anakin_resume(parser, args, given, args.launch or "anakin")
    # A resumed run's launch is its own, unless the command line names one (then the two must agree, below).
    saved = _read_saved(parser, args.resume) if args.resume and not (args.dataset or args.launch) else None
    launch = "offline" if args.dataset else args.launch or (saved.launch if saved else "single")
    for flag in [flag for flag in FLAGS if flag in given]:
        message = refusal(flag, launch, getattr(args, parser.dests[flag]))
        if message:
            parser.error(message)
    if args.list_config:
        return RunPlan(options=RunOptions(launch=launch), listing=_listing(parser, args))
    if args.resume:
        saved = saved or _read_saved(parser, args.resume)
    missing = _missing_package(args, given, launch, saved)  # before the run directory's checks: it is not the fault
    if missing:
        parser.error(missing)
    if args.resume:
        _check_resume(parser, args, given, saved, launch)
    else:
        _check_new_run(parser, args, given, launch)
    try:
        if launch == "anakin":
            return RunPlan(config=config_from_arguments(args), options=RunOptions(launch=launch),
                           overwrite=args.overwrite, compilation_cache=args.compilation_cache)
        options = _run_options(args, given, launch, saved)
        if launch == "offline":
            config = make_offline_experiment_config(**_arguments(parser, args, given, _OFFLINE_ARGUMENTS, saved))
        else:
            config = make_experiment_config(**_arguments(parser, args, given, _ONLINE_ARGUMENTS, saved))
        if args.resume:
            check_run_directory(config, options)  # the checkpoint must be this run's (agent, config, seed)
    except (ValueError, FileNotFoundError, CheckpointError) as error:
        parser.error(str(error))
    if launch in DISTRIBUTED and config.stop_at_average_return is not None and not config.evaluation_every:
        parser.error(f"--stop-at-return in mode {launch} needs --eval-every > 0: evaluation rounds decide the stop.")
    _check_bind_address(parser, args, given, launch, config)
    ray_options = _ray_options(parser, args) if launch == "ray" else None
    return RunPlan(config=config, options=options, ray_options=ray_options, overwrite=args.overwrite,
                   compilation_cache=args.compilation_cache)


# What a resumed Anakin run may change: how it reports and saves, not what it computes.
_ANAKIN_RESUME_FLAGS = {"--resume", "--launch", "--progress-seconds", "--checkpoint-every", "--compilation-cache"}


def _plan_anakin_resume(parser, args, given: FrozenSet[str], launch: str) -> RunPlan:
    """`--resume RUN_DIR` of an Anakin run: its `anakin.json`, with the progress and checkpoint period given."""
    if launch != "anakin" and "--launch" in given:
        parser.error(f"--resume {args.resume}: that run was launched with --launch anakin, and its checkpoints hold "
                     f"what that runner saves: leave --launch out to resume it as it was launched.")
    others = sorted(given - _ANAKIN_RESUME_FLAGS)
    if others:
        parser.error(f"--resume {args.resume} continues that Anakin run as it was started ({args.resume}/anakin.json): "
                     f"drop {', '.join(others)} (only --progress-seconds and --checkpoint-every may change).")
    changes = {"progress_period_s": args.progress_seconds}
    if "--checkpoint-every" in given:
        changes["checkpoint_every_minutes"] = args.checkpoint_every
    try:
        config = read_anakin_config(args.resume, **changes)
    except (CheckpointError, ValueError) as error:
        parser.error(str(error))
    return RunPlan(config=config, options=RunOptions(resume=True, launch="anakin"),
                   compilation_cache=args.compilation_cache)


def _missing_package(args, given: FrozenSet[str], launch: str, saved: Optional[_SavedRun]) -> Optional[str]:
    """`launch.cli.packages.missing_package` for this command line (a resumed run's own replay, environment and
    TensorBoard where the flags leave them out)."""
    saved_arguments = saved.arguments if saved else {}
    replay = args.replay if "--replay" in given else saved_arguments.get("replay")
    return missing_package(
        launch=launch,
        replay=replay if launch in ("single", "ray") else None,
        environment=args.env or saved_arguments.get("environment"),
        tensorboard=bool(args.tensorboard or (saved and saved.options.tensorboard)),
    )


def _listing(parser, args) -> str:
    if not args.agent:
        parser.error("--list-config lists an agent's config: add --agent NAME.")
    try:
        preset = None
        if args.preset:
            make_agent_config(args.agent, preset=args.preset, environment=args.env)  # the checks a run makes
            preset = (args.preset, preset_values(args.preset, args.agent, args.env))
        return format_config_fields(agent_definition(args.agent).config_class, preset)
    except ValueError as error:
        parser.error(str(error))


def _read_saved(parser, run_dir: str) -> _SavedRun:
    try:
        return _SavedRun(resume_arguments(run_dir), read_run_options(run_dir))
    except CheckpointError as error:
        parser.error(str(error))


def _check_new_run(parser, args, given: FrozenSet[str], launch: str) -> None:
    if not (args.agent and args.env):
        if launch == "offline":
            parser.error(f"--dataset needs --agent ({', '.join(offline_agents())}) and --env (the environment the "
                         f"agent is evaluated in).")
        parser.error("--agent and --env are required (or --resume RUN_DIR).")
    for flag in ("--overwrite", "--tensorboard", "--checkpoint-every"):
        if flag in given and not args.run_dir:
            parser.error(f"{flag} acts on the run directory: add --run-dir DIR.")
    if launch in DISTRIBUTED and not args.run_dir:
        parser.error(f"--launch {launch} needs --run-dir (node logs, progress and failures go there).")
    if "--seed" in given and "--seeds" in given:
        parser.error("--seed and --seeds both name the seeds: give --seeds alone (e.g. --seeds 3 or 0-15).")
    if args.run_dir:
        try:
            check_new_run_dir(args.run_dir, args.overwrite)
        except ValueError as error:
            parser.error(str(error))


def _check_resume(parser, args, given: FrozenSet[str], saved: _SavedRun, launch: str) -> None:
    """The command line's launch and run directory must be the resumed run's."""
    if "--overwrite" in given:
        parser.error(f"--resume {args.resume} continues that run; --overwrite would erase it: drop one of them.")
    if args.run_dir is not None and args.run_dir != args.resume:
        parser.error("--resume RUN_DIR continues RUN_DIR: leave --run-dir out.")
    if (launch == "offline") != (saved.launch == "offline") or (launch == "single") != (saved.launch == "single"):
        how = "--dataset " + saved.arguments["dataset"] if saved.launch == "offline" else f"--launch {saved.launch}"
        parser.error(
            f"--resume {args.resume}: that run was launched with {how}, and its checkpoints hold what that runner "
            f"saves: leave --launch and --dataset out to resume it as it was launched."
        )


def _arguments(parser, args, given: FrozenSet[str], names: Dict[str, str], saved: Optional[_SavedRun]) -> dict:
    """The config function's keyword arguments: the flags given (and --steps' default, for a new run); when
    resuming, the saved run's, which the flags given must agree with (agent, environment, seed, dataset), extend
    (--config, applied after the run's own) or replace (budget, evaluation, progress, stopping)."""
    arguments = {name: getattr(args, parser.dests[flag]) for flag, name in names.items() if flag in given}
    if saved is None:
        arguments.setdefault(names["--steps"], args.steps)
        return arguments
    for flag in _IDENTITY:
        name = names.get(flag)  # --dataset is offline's only; --replay and --preset online's
        if name in arguments and arguments[name] != saved.arguments.get(name):
            parser.error(
                f"--resume {args.resume}: the run there is {saved.arguments.get(name)!r} ({args.resume}/config.json), "
                f"not {arguments[name]!r} as {flag} says. Leave {flag} out to resume it, or choose a new --run-dir."
            )
    if "environment" not in arguments:  # read from config.json, not typed: it may not name a module to import
        check_environment_id_from_file(saved.arguments["environment"], os.path.join(args.resume, "config.json"))
    overrides = saved.arguments["config_overrides"] + arguments.pop("config_overrides", [])
    return {**saved.arguments, **arguments, "config_overrides": overrides, "run_dir": args.resume}


def _run_options(args, given: FrozenSet[str], launch: str, saved: Optional[_SavedRun]) -> RunOptions:
    """Checkpoints, TensorBoard and actors as given, else as the resumed run had them, else the defaults."""
    base = saved.options if saved else RunOptions()
    minutes = args.checkpoint_every if "--checkpoint-every" in given else base.checkpoint_every_minutes
    return RunOptions(
        checkpoint_every_minutes=minutes,
        tensorboard=args.tensorboard or base.tensorboard,
        resume=bool(args.resume),
        launch=launch,
        actors=args.actors if "--actors" in given else base.actors if launch in DISTRIBUTED else 1,
        bind_address=args.bind_address,  # never the saved run's: a file never opens a port beyond loopback
    )


def _check_bind_address(parser, args, given: FrozenSet[str], launch: str, config) -> None:
    """A run that starts servers needs the library that keeps them on --bind-address (`launch.engines.bind_address`,
    built here once); a single-process run with --replay local starts none, nor do offline and Anakin runs."""
    if launch not in DISTRIBUTED + ("single",):
        return
    if launch == "single" and config.replay != "reverb":
        if "--bind-address" in given:
            parser.error(f"--bind-address: --replay {config.replay} starts no server: drop --bind-address.")
        return
    try:
        if launch in ("local_mt", "local_mp"):
            check_launchpad_bind_address(args.bind_address)
        bind_address.check_can_listen(args.bind_address)
    except ValueError as error:
        parser.error(str(error))
    except bind_address.BindAddressError as error:
        parser.error(f"--bind-address: {error}")


def _ray_options(parser, args) -> RayOptions:
    try:
        return RayOptions(args.ray_address, parse_resources(args.ray_resources), args.ray_max_restarts)
    except ValueError as error:
        parser.error(f"--ray-resources: {error}")


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Runs the command line `argv`; returns the exit code (see the module docstring)."""
    run = plan(argv)
    if run.listing is not None:
        print(run.listing, flush=True)
        return 0
    try:
        compilation_cache.enable(run.compilation_cache)
    except ValueError as error:
        print(f"error: --compilation-cache: {error}", file=sys.stderr, flush=True)
        return 2
    start, run_dir = time.time(), run.config.run_dir
    try:
        # Under the run directory's lock (RunDirectoryRefused while another run holds it), a new run's directory is
        # checked again: a run racing for it may have won since `plan`.
        summary = train(run.config, overwrite=run.overwrite, ray_options=run.ray_options,
                        **dataclasses.asdict(run.options))
    except (RunDirectoryRefused, CheckpointError) as error:  # refused before the run wrote anything
        print(f"error: {error}", file=sys.stderr, flush=True)
        return 2
    except DistributedRunError as error:  # its nodes recorded their failures, and the summary lists them
        print(f"error: {error}", file=sys.stderr, flush=True)
        summary = failed_summary(error.summary or _identity(run, time.time() - start), error, run_dir, recorded=True)
    except Exception as error:  # noqa: BLE001 - every error that ends a run ends it with a summary
        summary = failed_summary(_identity(run, time.time() - start), error, run_dir)
        print(f"error: {summary['error']}", file=sys.stderr, flush=True)
    print(json.dumps(dict(summary)), flush=True)
    return exit_code(summary)


def _identity(run: RunPlan, wall_seconds: float) -> Dict[str, Any]:
    """What names a run whose runner made no summary (an error ended it first), for `failed_summary`."""
    config = run.config
    if run.launch == "anakin":
        known = {"agent": config.agent, "env": config.environment, "launch": "anakin", "seeds": list(config.seeds),
                 "config": dataclasses.asdict(config.resolved_agent_config)}
    else:
        known = {"agent": config.agent_name, "env": config.environment_name, "launch": run.launch, "seed": config.seed,
                 "config": config.agent_config_dict()}
        if run.launch == "offline":
            known["dataset"] = config.dataset_name
    return {**known, "wall_seconds": round(wall_seconds, 2)}


def exit_code(summary: Dict[str, Any]) -> int:
    """1 if an error ended the run or a final save failed; 128 + the signal's number if a signal ended the run;
    else 0."""
    if summary.get("failed") or summary.get("failures"):
        return 1
    if summary.get("interrupted"):
        return 128 + signal.Signals[summary["signal"]].value
    return 0


if __name__ == "__main__":
    sys.exit(main())
