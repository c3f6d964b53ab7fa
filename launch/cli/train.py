"""Command line: train an agent, in one process, offline, fully jitted or as a distributed program, and print a
one-line JSON summary.

    python -m launch --agent dqn --env CartPole-v1 --steps 100000 --seed 0 --run-dir runs/dqn
    python -m launch --agent dqn --env CartPole-v1 --launch local_mp --actors 2 --steps 100000 --run-dir runs/mp
    python -m launch --agent dqn --env CartPole-v1 --config learning_rate=5e-4 --config n_step=5
    python -m launch --agent ppo --env gymnax/CartPole-v1 --launch anakin --seeds 0-15 --steps 500000
    python -m launch --agent ppo --env CartPole-v1 --num-envs 8 --steps 100000
    python -m launch --agent sac --env dm_control/cartpole-swingup --action-repeat 8 --steps 12500   # 100k env steps
    python -m launch --agent dqn --env CartPole-v1 --launch local_mp --actors 4 --inference central --run-dir runs/seed
    python -m launch --resume runs/dqn             # continue a run from its latest checkpoint
    python -m launch --agent bc --dataset cartpole/expert-v0 --env CartPole-v1 --run-dir runs/bc   # offline
    python -m launch --agent sac --list-config     # every field --config can set: type, default, meaning

`plan(argv)` parses the command line into its typed `launch.cli.options.Command` (with tyro), checks it and builds
the run's config without running anything; `main` runs the plan. A flag works with the launches whose option class
holds its field (single, local_mt, local_mp, ray, anakin, offline); given with another it is refused, naming both.
Every mistake on the command line is a parser message (exit 2) naming the flag. The last line of standard output
is always the JSON summary alone. Ctrl-C or SIGTERM ends the run cleanly: the summary says `"interrupted": true`
and the exit code is 130 (SIGINT) or 143 (SIGTERM). Any error that ends a run, with any launch (a NaN loss, a full
disk, a node that fails), ends it with a summary that says `"failed": true` and the error
(`launch.experiments.summaries.failed_summary`), and exit 1; so does a final save that fails (the summary's
`failures`, and `<run_dir>/failures/`). One process at a time runs a run directory (`RunDirectoryLock`): a second
one exits 2, naming the first's pid.
"""

import dataclasses
import json
import os
import signal
import sys
import time
from typing import Any, Dict, List, NamedTuple, NoReturn, Optional, Sequence

import launch  # noqa: F401  (orders the JAX/TensorFlow imports before anything else)
from acmelike import compilation_cache
from acmelike.checkpointing import CheckpointError
from acmelike.wrappers import check_environment_id_from_file
from launch.cli import description
from launch.cli.options import (DISTRIBUTED, ActorNodes, Anakin, Command, FlagError, Preset, Ray, Servers,
                                flag_value, given_flags, launches_of, parse, refusal, with_launch_flag)
from launch.cli.packages import missing_package
from launch.engines import bind_address
from launch.engines.anakin import AnakinConfig, is_anakin_run, parse_seeds, read_anakin_config
from launch.engines.distributed.launchpad_engine import check_launchpad_bind_address
from launch.engines.distributed.ray_engine import RayOptions, parse_resources
from launch.engines.distributed.supervisor import DistributedRunError
from launch.engines.train import train
from launch.experiments.make import make_agent_config, make_experiment_config, make_offline_experiment_config
from launch.experiments.overrides import format_config_fields
from launch.experiments.presets import preset_values
from launch.experiments.summaries import failed_summary, summary_identity
from launch.lifecycle.run_directory import (
    DEFAULT_CHECKPOINT_MINUTES,
    RunDirectoryRefused,
    RunOptions,
    check_new_run_dir,
    check_run_directory,
    read_run_options,
    resume_arguments,
)
from launch.registry import agent_definition, offline_agents


class CommandLineError(Exception):
    """A mistake on the command line: `plan` prints it as the parser's message and exits 2."""


def _error(message: str) -> NoReturn:
    """Ends planning with `message`, which `plan` prints as the parser's message before it exits 2."""
    raise CommandLineError(message)


@dataclasses.dataclass(frozen=True)
class RunPlan:
    """A checked command line, ready to run: `plan` builds it, `main` runs it.

    Attributes:
      config: the launch's config: `ExperimentConfig` (single, local_mt, local_mp, ray), `OfflineExperimentConfig`
        (offline) or `AnakinConfig` (anakin); None for a listing.
      options: the launch (one of `launch.cli.options.LAUNCHES`, as the summary's `launch` records it), checkpoints,
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
                     "--inference": "inference", "--replay": "replay", "--preset": "preset",
                     "--action-repeat": "action_repeat"}
_OFFLINE_ARGUMENTS = {**_SHARED_ARGUMENTS, "--steps": "max_num_learner_steps", "--dataset": "dataset"}
# What names a run: given with --resume, these must be the run's own.
# --replay too: a checkpoint holds the replay in its own format; --preset: the run's config started from it;
# --action-repeat: the checkpoint's step counts, replay and policy are of steps that long.
_IDENTITY = ("--agent", "--env", "--seed", "--dataset", "--replay", "--preset", "--action-repeat")


def plan(argv: Optional[Sequence[str]] = None) -> RunPlan:
    """Parses and checks `argv` and builds the run's config, without training or writing anything. Every
    mistake is a parser error: SystemExit(2), with a message on stderr naming the flag."""
    argv = with_launch_flag(sys.argv[1:] if argv is None else argv)
    try:
        return _plan(argv)
    except CommandLineError as error:
        print(f"usage: {PROG} [-h] [OPTIONS]\n{PROG}: error: {error}", file=sys.stderr, flush=True)
        raise SystemExit(2) from None


PROG = "python -m launch"


def _plan(argv: List[str]) -> RunPlan:
    given = given_flags(argv)
    resume, launch_flag = given.get("--resume"), given.get("--launch")
    if "--launch" in given and launch_flag not in launches_of("--launch"):
        _error(f"--launch: expected one of {', '.join(launches_of('--launch'))}, got {launch_flag!r}.")
    if resume and is_anakin_run(resume):
        return _plan_anakin_resume(argv, given, launch_flag or "anakin")
    # A resumed run's launch is its own, unless the command line names one (then the two must agree, below).
    saved = _read_saved(resume) if resume and not ("--dataset" in given or launch_flag) else None
    launch = "offline" if "--dataset" in given else launch_flag or (saved.launch if saved else "single")
    for flag, value in given.items():
        message = refusal(flag, launch, value or "")
        if message:
            _error(message)
    command = _parse(argv, launch)
    if command.list_config:
        return RunPlan(options=RunOptions(launch=launch), listing=_listing(command))
    if command.resume:
        saved = saved or _read_saved(command.resume)
    missing = _missing_package(command, given, launch, saved)  # before the run directory's checks: not its fault
    if missing:
        _error(missing)
    if command.resume:
        _check_resume(command, given, saved, launch)
    else:
        _check_new_run(command, given, launch)
    try:
        if launch == "anakin":
            return RunPlan(config=_anakin_config(command), options=RunOptions(launch=launch),
                           overwrite=command.overwrite, compilation_cache=command.compilation_cache)
        options = _run_options(command, given, launch, saved)
        if launch == "offline":
            config = make_offline_experiment_config(**_arguments(command, given, _OFFLINE_ARGUMENTS, saved))
        else:
            config = make_experiment_config(**_arguments(command, given, _ONLINE_ARGUMENTS, saved))
        if command.resume:
            check_run_directory(config, options)  # the checkpoint must be this run's (agent, config, seed)
    except (ValueError, FileNotFoundError, CheckpointError) as error:
        _error(str(error))
    if launch in DISTRIBUTED and config.stop_at_average_return is not None and not config.evaluation_every:
        _error(f"--stop-at-return in mode {launch} needs --eval-every > 0: evaluation rounds decide the stop.")
    _check_bind_address(command, given, launch, config)
    ray_options = _ray_options(command.launch) if launch == "ray" else None
    return RunPlan(config=config, options=options, ray_options=ray_options, overwrite=command.overwrite,
                   compilation_cache=command.compilation_cache)


def _parse(argv: List[str], launch: str) -> Command:
    """`argv` as the typed `Command` of `launch` (tyro prints what it cannot read, and exits 2)."""
    try:
        return parse(argv, launch, prog=PROG, description=description(__doc__))
    except FlagError as error:
        _error(f"{error}.")


# What a resumed Anakin run may change: how it reports and saves, not what it computes.
_ANAKIN_RESUME_FLAGS = {"--resume", "--launch", "--progress-seconds", "--checkpoint-every", "--compilation-cache"}


def _plan_anakin_resume(argv: List[str], given: Dict[str, Optional[str]], launch: str) -> RunPlan:
    """`--resume RUN_DIR` of an Anakin run: its config.json, with the progress and checkpoint period given."""
    resume = given["--resume"]
    if launch != "anakin":
        _error(f"--resume {resume}: that run was launched with --launch anakin, and its checkpoints hold what that "
               f"runner saves: leave --launch out to resume it as it was launched.")
    others = sorted(set(given) - _ANAKIN_RESUME_FLAGS)
    if others:
        _error(f"--resume {resume} continues that Anakin run as it was started ({resume}/config.json): "
               f"drop {', '.join(others)} (only --progress-seconds and --checkpoint-every may change).")
    command = _parse(argv, launch)
    changes = {"progress_period_s": command.progress_seconds}
    if command.checkpoint_every is not None:
        changes["checkpoint_every_minutes"] = command.checkpoint_every
    try:
        config = read_anakin_config(resume, **changes)
    except (CheckpointError, ValueError) as error:
        _error(str(error))
    return RunPlan(config=config, options=RunOptions(resume=True, launch="anakin"),
                   compilation_cache=command.compilation_cache)


def _anakin_config(command: Command) -> AnakinConfig:
    """The `AnakinConfig` of a command line of --launch anakin (ValueError naming what is wrong)."""
    options: Anakin = command.launch
    return AnakinConfig(
        agent=command.agent,
        environment=command.env,
        max_num_actor_steps=command.steps,
        seeds=parse_seeds(options.seeds) if options.seeds else (command.seed,),
        agent_config=make_agent_config(command.agent, list(command.config), preset=options.preset,
                                       environment=command.env),
        target_return=command.target_return,
        run_dir=command.run_dir,
        stop_at_average_return=command.stop_at_return,
        progress_period_s=command.progress_seconds,
        tensorboard=command.tensorboard,
        checkpoint_every_minutes=(command.checkpoint_every or DEFAULT_CHECKPOINT_MINUTES) if command.run_dir else None,
        **({} if command.return_window is None else {"return_window": command.return_window}),
    )


def _missing_package(command: Command, given, launch: str, saved: Optional[_SavedRun]) -> Optional[str]:
    """`launch.cli.packages.missing_package` for this command line (a resumed run's own replay, environment and
    TensorBoard where the flags leave them out)."""
    saved_arguments = saved.arguments if saved else {}
    replay = command.launch.replay if "--replay" in given else saved_arguments.get("replay")
    return missing_package(
        launch=launch,
        replay=replay if launch in ("single", "ray") else None,
        environment=command.env or saved_arguments.get("environment"),
        tensorboard=bool(command.tensorboard or (saved and saved.options.tensorboard)),
    )


def _listing(command: Command) -> str:
    if not command.agent:
        _error("--list-config lists an agent's config: add --agent NAME.")
    preset_name = command.launch.preset if isinstance(command.launch, Preset) else None
    try:
        preset = None
        if preset_name:
            make_agent_config(command.agent, preset=preset_name, environment=command.env)  # the checks a run makes
            preset = (preset_name, preset_values(preset_name, command.agent, command.env))
        return format_config_fields(agent_definition(command.agent).config_class, preset)
    except ValueError as error:
        _error(str(error))


def _read_saved(run_dir: str) -> _SavedRun:
    try:
        return _SavedRun(resume_arguments(run_dir), read_run_options(run_dir))
    except CheckpointError as error:
        _error(str(error))


def _check_new_run(command: Command, given, launch: str) -> None:
    if not (command.agent and command.env):
        if launch == "offline":
            _error(f"--dataset needs --agent ({', '.join(offline_agents())}) and --env (the environment the agent is "
                   f"evaluated in).")
        _error("--agent and --env are required (or --resume RUN_DIR).")
    for flag in ("--overwrite", "--tensorboard", "--checkpoint-every"):
        if flag in given and not command.run_dir:
            _error(f"{flag} acts on the run directory: add --run-dir DIR.")
    if launch in DISTRIBUTED and not command.run_dir:
        _error(f"--launch {launch} needs --run-dir (node logs, progress and failures go there).")
    if "--seed" in given and "--seeds" in given:
        _error("--seed and --seeds both name the seeds: give --seeds alone (e.g. --seeds 3 or 0-15).")
    if command.run_dir:
        try:
            check_new_run_dir(command.run_dir, command.overwrite)
        except ValueError as error:
            _error(str(error))


def _check_resume(command: Command, given, saved: _SavedRun, launch: str) -> None:
    """The command line's launch and run directory must be the resumed run's."""
    if "--overwrite" in given:
        _error(f"--resume {command.resume} continues that run; --overwrite would erase it: drop one of them.")
    if command.run_dir is not None and command.run_dir != command.resume:
        _error("--resume RUN_DIR continues RUN_DIR: leave --run-dir out.")
    if launch != saved.launch and not (launch in DISTRIBUTED and saved.launch in DISTRIBUTED):
        how = "--dataset " + saved.arguments["dataset"] if saved.launch == "offline" else f"--launch {saved.launch}"
        _error(f"--resume {command.resume}: that run was launched with {how}, and its checkpoints hold what that "
               f"runner saves: leave --launch and --dataset out to resume it as it was launched.")


def _arguments(command: Command, given, names: Dict[str, str], saved: Optional[_SavedRun]) -> dict:
    """The config function's keyword arguments: the flags given (and --steps' default, for a new run); when
    resuming, the saved run's, which the flags given must agree with (agent, environment, seed, dataset), extend
    (--config, applied after the run's own) or replace (budget, evaluation, progress, stopping)."""
    arguments = {name: flag_value(command, flag) for flag, name in names.items() if flag in given}
    if "config_overrides" in arguments:
        arguments["config_overrides"] = list(arguments["config_overrides"])
    if saved is None:
        arguments.setdefault(names["--steps"], command.steps)
        return arguments
    for flag in _IDENTITY:
        name = names.get(flag)  # --dataset is offline's only; --replay and --preset online's
        if name in arguments and arguments[name] != saved.arguments.get(name):
            _error(f"--resume {command.resume}: the run there is {saved.arguments.get(name)!r} "
                   f"({command.resume}/config.json), not {arguments[name]!r} as {flag} says. Leave {flag} out to "
                   f"resume it, or choose a new --run-dir.")
    if "environment" not in arguments:  # read from config.json, not typed: it may not name a module to import
        check_environment_id_from_file(saved.arguments["environment"], os.path.join(command.resume, "config.json"))
    overrides = saved.arguments["config_overrides"] + arguments.pop("config_overrides", [])
    return {**saved.arguments, **arguments, "config_overrides": overrides, "run_dir": command.resume}


def _run_options(command: Command, given, launch: str, saved: Optional[_SavedRun]) -> RunOptions:
    """Checkpoints, TensorBoard and actors as given, else as the resumed run had them, else the defaults."""
    base = saved.options if saved else RunOptions()
    minutes = command.checkpoint_every if "--checkpoint-every" in given else base.checkpoint_every_minutes
    distributed = isinstance(command.launch, ActorNodes)
    return RunOptions(
        checkpoint_every_minutes=minutes,
        tensorboard=command.tensorboard or base.tensorboard,
        resume=bool(command.resume),
        launch=launch,
        actors=command.launch.actors if "--actors" in given else base.actors if distributed else 1,
        # never the saved run's: a file never opens a port beyond loopback
        bind_address=command.launch.bind_address if isinstance(command.launch, Servers) else None,
    )


def _check_bind_address(command: Command, given, launch: str, config) -> None:
    """A run that starts servers needs the library that keeps them on --bind-address (`launch.engines.bind_address`,
    built here once); a single-process run with --replay local starts none, nor do offline and Anakin runs."""
    if not isinstance(command.launch, Servers):
        return
    address = command.launch.bind_address
    if launch == "single" and config.replay != "reverb":
        if "--bind-address" in given:
            _error(f"--bind-address: --replay {config.replay} starts no server: drop --bind-address.")
        return
    try:
        if launch in ("local_mt", "local_mp"):
            check_launchpad_bind_address(address)
        bind_address.check_can_listen(address)
    except ValueError as error:
        _error(str(error))
    except bind_address.BindAddressError as error:
        _error(f"--bind-address: {error}")


def _ray_options(options: Ray) -> RayOptions:
    try:
        return RayOptions(options.ray_address, parse_resources(options.ray_resources), options.ray_max_restarts)
    except ValueError as error:
        _error(f"--ray-resources: {error}")


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
        known = {"agent": config.agent, "env": config.environment, "seeds": list(config.seeds),
                 "config": dataclasses.asdict(config.resolved_agent_config)}
    else:
        known = summary_identity(config)
        if run.launch == "offline":
            known["dataset"] = config.dataset
    return {**known, "launch": run.launch, "wall_seconds": round(wall_seconds, 2)}


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
