"""The command line of `python -m launch` as types: what every run takes, and what each launch adds, parsed by tyro.

    Command(agent="dqn", env="CartPole-v1", steps=100_000, ..., launch=Ray(actors=2, ray_address=None, ...))

A run's launch is one of six classes (`LAUNCH_CLASSES`), each composed of the option parts below that make sense
for it: `Ray` has `ActorNodes`, `Single` has not, so `--actors` cannot be given to a single-process run. The flag
x launch table, its refusals and their tests are read from these types (`launches_of`, `refusal`); nothing else
lists them. On the command line the launch is chosen as before, and the parser turns the choice into tyro's
subcommand (`tyro_arguments`):

    launch = "offline" if --dataset (or --resume of an offline run) else --launch (or the resumed run's) or "single"

Each field's help is its line in an `Attributes:` section, as in the agents' configs. A field's flag is its name
with dashes (`num_envs` is `--num-envs`). A value out of range is a `FlagError` naming the flag; a flag given with a
launch whose class lacks it is refused by `refusal`, naming the flag, the launch and what to do instead.
"""

import dataclasses
import inspect
from typing import ClassVar, Dict, FrozenSet, List, Literal, Mapping, Optional, Sequence, Tuple, Union

import tyro
from typing_extensions import Annotated

from launch.engines.distributed.launcher import DISTRIBUTED
from launch.experiments.config import INFERENCE_MODES, MAX_SEED, REPLAY_KINDS
from launch.experiments.overrides import docstring_attributes


# A flag that may be left out (None): its help says what then happens, so tyro adds no "(default: None)".
LEFT_OUT = tyro.conf.arg(help_behavior_hint="")


class FlagError(Exception):
    """A flag's value the command line cannot take; its message names the flag. Not a ValueError, so that tyro lets
    it through to the parser, which prints it as one line."""


def bounded(default, minimum, strictly: bool = False, maximum=None):
    """A field whose value, when given, must be >= minimum (> if `strictly`) and <= maximum (`Options` checks)."""
    return dataclasses.field(default=default, metadata={"bounds": (minimum, strictly, maximum)})


@dataclasses.dataclass(frozen=True)
class Options:
    """The base of the run's flags and of every option part: checks the fields declared `bounded`."""

    def __post_init__(self):
        for field in dataclasses.fields(self):
            value = getattr(self, field.name)
            if "bounds" not in field.metadata or value is None:  # None: the flag was left out
                continue
            minimum, strictly, maximum = field.metadata["bounds"]
            if value < minimum or (strictly and value == minimum):
                raise FlagError(f"{flag_of(field.name)}: must be {'>' if strictly else '>='} {minimum}, got {value}")
            if maximum is not None and value > maximum:
                raise FlagError(f"{flag_of(field.name)}: must be <= {maximum}, got {value}")


# What each option part says where its launch lacks it: one text, or one per launch. {flag}, {value} and {launch}
# ("mode <launch>") are filled in by `refusal`.
Instead = Union[str, Mapping[str, str]]


@dataclasses.dataclass(frozen=True)
class RunFlags(Options):
    """What every run takes, whatever its launch.

    Attributes:
      agent: the agent to train, by its name in the registry (docs/agents.md lists them; a wrong name is answered
        with the list)
      env: a gymnasium environment id, e.g. CartPole-v1; dm_control/<domain>-<task> for the DeepMind Control Suite,
        e.g. dm_control/walker-walk; mpe/<name> for multi-agent agents (anakin: gymnax/<id>, brax/<task> or
        playground/<task> for continuous agents, or jaxmarl/<id> for multi-agent agents). A module:Env-v0 id
        makes gymnasium import the module, so it is taken only as typed here, never read back from a run directory
      steps: environment steps to train for (offline: learner steps)
      seed: 0 to 2**32 - 1 (JAX's PRNGKey keeps 32 bits of a seed)
      run_dir: where config.json, CSV logs, learning_curve.png, checkpoints and summary.json go; a non-empty one
        needs --overwrite, and one process at a time runs it (a second exits 2)
      overwrite: replace what a non-empty --run-dir holds
      config: set a field of the agent's config, as FIELD=VALUE, e.g. --config learning_rate=3e-4
        (--list-config lists them)
      target_return: the return that counts as solved (default: gymnasium's reward_threshold for --env, if it has
        one)
      return_window: episodes averaged in the summary, default 20 (offline: evaluation episodes, default 10)
      progress_seconds: seconds between progress lines
      stop_at_return: stop early once the last --return-window episodes (distributed and offline: an evaluation
        round, with --eval-every > 0) average at least this
      checkpoint_every: minutes between checkpoints of a run with --run-dir (default 10; one is also written at
        every clean stop)
      tensorboard: also write TensorBoard event files (needs --run-dir)
      resume: continue the run in this run directory from its latest checkpoint, launched as it was
      compilation_cache: keep compiled XLA executables in this directory, so the next run of the same agent pays no
        compile; off: compile every time. Default: $ACMELIKE_COMPILATION_CACHE, else ~/.cache/acmelike/jax
        (acmelike/compilation_cache.py)
      list_config: list every field of --agent's config (type, default, meaning) and exit
    """

    agent: Annotated[Optional[str], LEFT_OUT] = None
    env: Annotated[Optional[str], LEFT_OUT] = None
    steps: int = bounded(100_000, 1)
    seed: int = bounded(0, 0, maximum=MAX_SEED)
    run_dir: Annotated[Optional[str], LEFT_OUT] = None
    overwrite: bool = False
    config: Annotated[Tuple[str, ...], tyro.conf.UseAppendAction] = ()
    target_return: Annotated[Optional[float], LEFT_OUT] = None
    return_window: Annotated[Optional[int], LEFT_OUT] = bounded(None, 1)
    progress_seconds: float = bounded(5.0, 0.0, strictly=True)
    stop_at_return: Annotated[Optional[float], LEFT_OUT] = None
    checkpoint_every: Annotated[Optional[float], LEFT_OUT] = bounded(None, 0.0, strictly=True)
    tensorboard: bool = False
    resume: Annotated[Optional[str], LEFT_OUT] = None
    compilation_cache: Annotated[Optional[str], LEFT_OUT] = None
    list_config: bool = False

    def __post_init__(self):
        super().__post_init__()
        for assignment in self.config:
            if "=" not in assignment:
                raise FlagError(f"--config expects FIELD=VALUE (e.g. learning_rate=3e-4), got {assignment!r}")


# The option parts. Each names, in `instead`, what to do in a launch whose class lacks it.

_ANAKIN_BATCH = ("Anakin's batch of environments is set by the agent's fully jitted form (agents/<name>/anakin.py) "
                 "from its config, as that form's docstring says (PPO's, for one: --config batch_size=N); the run's "
                 "summary reports it as num_envs")


@dataclasses.dataclass(frozen=True)
class Evaluation(Options):
    """A separate evaluator.

    Attributes:
      eval_every: actor steps (offline: learner steps) between evaluations; 0: no evaluator. Default: 0 online, and
        250 offline
    """

    eval_every: Annotated[Optional[int], LEFT_OUT] = bounded(None, 0)
    instead: ClassVar[Instead] = ("Anakin has no separate evaluator: drop {flag} (the summary reports the training "
                                  "episodes' returns)")



@dataclasses.dataclass(frozen=True)
class Preset(Options):
    """Hyperparameters per task.

    Attributes:
      preset: start the agent's config from a preset's per-task hyperparameters (launch/presets/NAME.json; a wrong
        name is answered with the list); --config overrides win over it, and --resume keeps it
    """

    preset: Annotated[Optional[str], LEFT_OUT] = None
    instead: ClassVar[Instead] = ("presets hold hyperparameters of agents that learn online: drop {flag}, and set "
                                  "the agent's fields with --config FIELD=VALUE")


@dataclasses.dataclass(frozen=True)
class EnvironmentBatch(Options):
    """Environments stepped together.

    Attributes:
      num_envs: environments each actor steps together, with one batched policy call per step (default 1)
    """

    num_envs: Annotated[Optional[int], LEFT_OUT] = bounded(None, 1)
    instead: ClassVar[Instead] = {
        "anakin": _ANAKIN_BATCH + ": drop {flag}",
        "offline": "an offline run steps no environments but the evaluator's: drop {flag}",
    }



@dataclasses.dataclass(frozen=True)
class ActionRepeat(Options):
    """Each action held for several environment steps.

    Attributes:
      action_repeat: apply each of the agent's actions this many environment steps (default 1), summing their
        rewards (acmelike.wrappers.ActionRepeatWrapper), as the Control Suite's pixel benchmarks do (8 on
        cartpole, 4 on cheetah, 2 on walker). Every count (--steps, --eval-every, logs, the summary's env_steps)
        is then of the agent's steps, each this many environment steps; config.json and snapshots record it,
        so --resume and evaluate repeat as the run did
    """

    action_repeat: Annotated[Optional[int], LEFT_OUT] = bounded(None, 1)
    instead: ClassVar[Instead] = {
        "anakin": ("Anakin steps its JAX environments inside one jitted function, which repeats no actions: drop "
                   "{flag}, or train with --launch single"),
        "offline": "an offline run learns from recorded steps, whose actions were not repeated: drop {flag}",
    }


@dataclasses.dataclass(frozen=True)
class Servers(Options):
    """Servers the run starts.

    Attributes:
      bind_address: the address every server of the run listens on (Reverb, Launchpad's nodes, a local Ray;
        single: with --replay reverb): default 127.0.0.1, this machine only, or with --ray-address the address this
        machine reaches the cluster from; 0.0.0.0: every interface (local_mt and local_mp take these two only). A
        resumed run never reads it from the run directory (docs/runs.md, 'What a run exposes')
    """

    bind_address: Annotated[Optional[str], LEFT_OUT] = None
    instead: ClassVar[Instead] = "{launch} starts no server: drop {flag}"


@dataclasses.dataclass(frozen=True)
class ReplayChoice(Options):
    """Which replay serves the agent's tables.

    Attributes:
      replay: single process: local (the default) serves the agent's tables in-process with seeded, synchronous
        sampling, so the same --seed gives a bit-identical run (and imports no TensorFlow); reverb runs an embedded
        Reverb server, as Launchpad programs use (not repeatable). ray: local (the default) has the replay node
        serve the local tables; reverb makes it a Reverb server (the classic stack)
    """

    replay: Annotated[Optional[Literal[REPLAY_KINDS]], LEFT_OUT] = None
    instead: ClassVar[Instead] = {
        "local_mt": "a Launchpad program's nodes share one Reverb server: drop {flag}",
        "local_mp": "a Launchpad program's nodes share one Reverb server: drop {flag}",
        "anakin": "Anakin's replay lives inside its jitted function (and is already seeded): drop {flag}",
        "offline": "an offline run samples its dataset, not a replay: drop {flag}",
    }


_NO_ACTORS = "{launch} has no actor nodes: drop {flag}, or train as a distributed program (--launch local_mp)"


@dataclasses.dataclass(frozen=True)
class ActorNodes(Options):
    """Actor processes.

    Attributes:
      actors: actor nodes of a distributed program (default 1)
    """

    actors: Annotated[Optional[int], LEFT_OUT] = bounded(None, 1)
    instead: ClassVar[Instead] = {
        "single": _NO_ACTORS,
        "offline": "an offline run has no actors: drop {flag}",
        "anakin": "Anakin runs no actor processes: drop {flag} (" + _ANAKIN_BATCH + ")",
    }



@dataclasses.dataclass(frozen=True)
class CentralInference(Options):
    """Where actors' policy runs.

    Attributes:
      inference: local (the default): in each actor; central: one inference node serves every actor in dynamic
        batches (SEED RL) and actors only step environments
    """

    inference: Annotated[Optional[Literal[INFERENCE_MODES]], LEFT_OUT] = None
    instead: ClassVar[Instead] = ("{flag} says where a distributed program's actors run their policy; {launch} has no "
                                  "inference node: use --launch local_mt, local_mp or ray (with --actors N), or drop "
                                  "{flag}")


_RAY_ONLY = "{flag} configures a Ray program: drop it, or use --launch ray"


@dataclasses.dataclass(frozen=True)
class RayCluster(Options):
    """The Ray cluster.

    Attributes:
      ray_address: join this Ray cluster (`ray start --head` prints it); default: start Ray on this machine
      ray_resources: custom Ray resources each node of a group needs, as GROUP=RESOURCE[:AMOUNT],..., e.g.
        actor=worker,learner=head
      ray_max_restarts: restarts of an actor whose process died
    """

    ray_address: Annotated[Optional[str], LEFT_OUT] = None
    ray_resources: str = ""
    ray_max_restarts: int = bounded(3, 0)
    instead: ClassVar[Instead] = _RAY_ONLY



@dataclasses.dataclass(frozen=True)
class SeedSweep(Options):
    """Seeds in one call.

    Attributes:
      seeds: seeds trained in one vmapped call, e.g. 0-15
    """

    seeds: Annotated[Optional[str], LEFT_OUT] = None
    instead: ClassVar[Instead] = ("{flag} trains several seeds in one vmapped call, with --launch anakin only: give "
                                  "one --seed")


@dataclasses.dataclass(frozen=True)
class Dataset(Options):
    """Learning from a dataset.

    Attributes:
      dataset: train an offline agent on this local Minari dataset; --steps then counts learner steps
    """

    dataset: Annotated[Optional[str], LEFT_OUT] = None
    instead: ClassVar[Instead] = ""


# The launches. Each is its option parts; `name` is its --launch value, `source` how a command line chooses it.


@dataclasses.dataclass(frozen=True)
class Single(Evaluation, Preset, EnvironmentBatch, ActionRepeat, Servers, ReplayChoice):
    """One process (the default)."""

    name: ClassVar[str] = "single"
    source: ClassVar[str] = "--launch single, the default"


@dataclasses.dataclass(frozen=True)
class Launchpad(Evaluation, Preset, EnvironmentBatch, ActionRepeat, Servers, ActorNodes, CentralInference):
    """A Launchpad program: actors, learner, replay and evaluator as nodes."""


@dataclasses.dataclass(frozen=True)
class LocalMt(Launchpad):
    """A Launchpad program, its nodes threads of one process."""

    name: ClassVar[str] = "local_mt"
    source: ClassVar[str] = "--launch local_mt"


@dataclasses.dataclass(frozen=True)
class LocalMp(Launchpad):
    """A Launchpad program, its nodes processes."""

    name: ClassVar[str] = "local_mp"
    source: ClassVar[str] = "--launch local_mp"


@dataclasses.dataclass(frozen=True)
class Ray(Evaluation, Preset, EnvironmentBatch, ActionRepeat, Servers, ReplayChoice, ActorNodes, CentralInference,
          RayCluster):
    """The same program as Ray actors (launch/engines/distributed/ray_engine.py)."""

    name: ClassVar[str] = "ray"
    source: ClassVar[str] = "--launch ray"


@dataclasses.dataclass(frozen=True)
class Anakin(Preset, SeedSweep):
    """Fully jitted, for gymnax/<id> (jaxmarl/<id>, brax/<task>, playground/<task>) environments
    (launch/engines/anakin.py)."""

    name: ClassVar[str] = "anakin"
    source: ClassVar[str] = "--launch anakin"


@dataclasses.dataclass(frozen=True)
class Offline(Evaluation, Dataset):
    """Learning from a dataset, in one process."""

    name: ClassVar[str] = "offline"
    source: ClassVar[str] = "--dataset, or --resume of an offline run"


LAUNCH_CLASSES: Tuple[type, ...] = (Single, LocalMt, LocalMp, Ray, Anakin, Offline)
LAUNCHES = tuple(cls.name for cls in LAUNCH_CLASSES)
# tyro's subcommands: one per launch, named as --launch names it.
LaunchOptions = Union[tuple(Annotated[cls, tyro.conf.subcommand(cls.name, default=cls())] for cls in LAUNCH_CLASSES)]


@dataclasses.dataclass(frozen=True)
class Command(RunFlags):
    """A command line: what every run takes, and its launch's own options.

    Attributes:
      launch: the run's launch and its options: single (the default), one process; local_mt / local_mp, a Launchpad
        program (threads / processes); ray, the same program as Ray actors; anakin, fully jitted; offline, from
        --dataset. Written --launch NAME; with --resume the default is the run's own launch
    """

    launch: LaunchOptions = Single()


# The flags, as the types hold them.


def flag_of(field: str) -> str:
    return "--" + field.replace("_", "-")


def _field_of(flag: str) -> str:
    return flag[2:].replace("-", "_")


def _fields(cls: type) -> List[str]:
    return [field.name for field in dataclasses.fields(cls)]


def flag_value(command: Command, flag: str):
    """The value of `flag` in `command`: a field of the run's, or of its launch's options."""
    field = _field_of(flag)
    return getattr(command if field in _fields(RunFlags) else command.launch, field)


def launch_class(launch: str) -> type:
    return {cls.name: cls for cls in LAUNCH_CLASSES}[launch]


def flags_of(launch: str) -> FrozenSet[str]:
    """Every flag a command line of `launch` may give: the run's, --launch (not offline's: --dataset chooses it) and
    its launch class's."""
    own = _fields(RunFlags) + _fields(launch_class(launch)) + ([] if launch == "offline" else ["launch"])
    return frozenset(flag_of(field) for field in own)


def all_flags() -> List[str]:
    """Every flag, in the order `--help` lists them: the run's, --launch, then each part's as the launches first
    name it."""
    fields = _fields(RunFlags) + ["launch"]
    for cls in LAUNCH_CLASSES:
        fields += [field for field in _fields(cls) if field not in fields]
    return [flag_of(field) for field in fields]


def launches_of(flag: str) -> Tuple[str, ...]:
    """The launches with which `flag` works."""
    return tuple(launch for launch in LAUNCHES if flag in flags_of(launch))


def _part_of(flag: str) -> Optional[type]:
    """The option part that declares `flag` (None for the run's flags and --launch)."""
    for cls in LAUNCH_CLASSES:
        for part in cls.__mro__:
            if flag in {flag_of(name) for name in inspect.get_annotations(part)} and "instead" in vars(part):
                return part
    return None


def refusal(flag: str, launch: str, value: object = "") -> Optional[str]:
    """None if `flag` works with `launch`; else the message that refuses it, naming the flag, the launch (as "mode
    <launch>") and what to do instead (`value`, the flag's value as given, may be part of that)."""
    if flag in flags_of(launch):
        return None
    if flag == "--launch":  # offline: --dataset chose the launch
        instead = ("an offline run learns in one process from its dataset: drop {flag} {value}, or drop --dataset to "
                   "train online with {flag} {value}")
    else:
        part = _part_of(flag)
        instead = part.instead if part else ""
        instead = instead.get(launch, "") if isinstance(instead, Mapping) else instead
    instead = instead.format(flag=flag, value=value, launch=f"mode {launch}")
    source = launch_class(launch).source
    return f"{flag} does not work in mode {launch} ({source}){': ' + instead if instead else ''}."


def help_lines() -> Dict[str, str]:
    """flag -> its help text (its `Attributes:` line), for --help's tests and the docs."""
    lines = {**docstring_attributes(Command)}
    for cls in LAUNCH_CLASSES:
        lines.update({name: text for name, text in docstring_attributes(cls).items() if name not in lines})
    return {flag: lines[_field_of(flag)] for flag in all_flags()}


# Reading a command line.


def given_flags(argv: Sequence[str]) -> Dict[str, Optional[str]]:
    """flag -> the value that follows it (None for a switch, or a flag last), for every known flag in `argv`, read
    before parsing: the launch, and which flags it refuses, are decided from these."""
    known = set(all_flags())
    given: Dict[str, Optional[str]] = {}
    for i, token in enumerate(argv):
        flag, equals, value = token.partition("=")
        if flag in known and flag not in given:
            follows = argv[i + 1] if i + 1 < len(argv) and not argv[i + 1].startswith("--") else None
            given[flag] = value if equals else follows
    return given


def with_launch_flag(argv: Sequence[str]) -> List[str]:
    """`argv`, its launch written as a flag: tyro's usage line offers the launch as a first word (`python -m launch
    ray --agent dqn ...`), which means `--launch ray` (`offline` is chosen by --dataset, so it adds nothing)."""
    argv = list(argv)
    if argv and argv[0] in LAUNCHES:
        return (["--launch", argv[0]] if argv[0] != "offline" else []) + argv[1:]
    return argv


def tyro_arguments(argv: Sequence[str], launch: str) -> List[str]:
    """`argv` as tyro reads it: --launch NAME becomes the subcommand NAME, first. `--help` alone asks for the
    command's help (its description, and the launches), `--launch NAME --help` for that launch's."""
    rest, named, skip = [], False, False
    for token in argv:
        if skip:
            skip = False
        elif token == "--launch" or token.startswith("--launch="):
            named, skip = True, token == "--launch"
        else:
            rest.append(token)
    if not named and ("--help" in rest or "-h" in rest):
        return rest
    return [launch] + rest


def parse(argv: Sequence[str], launch: str, prog: str, description: str) -> Command:
    """The command line `argv` of a run of `launch`, as its typed `Command`: tyro's message and exit 2 for what it
    cannot read, FlagError for a value out of range."""
    markers = (tyro.conf.OmitSubcommandPrefixes, tyro.conf.CascadeSubcommandArgs, tyro.conf.FlagCreatePairsOff)
    return tyro.cli(Command, args=tyro_arguments(argv, launch), prog=prog, description=description, config=markers)
