"""Which flag of `python -m launch` works with which launch: the one table the parser checks and its tests are made
from.

A run's launch (as `RunOptions.launch` and the summary's `launch` record it; messages call it the run's mode) is
`offline` when it learns from a dataset (`--dataset`, or `--resume` of an offline run), else its `--launch` (or the
resumed run's; `single` by default):

    launch = "offline" if dataset else launch_flag or "single"
    refusal("--num-envs", "anakin", "4")   # None where the flag works, else the parser's message: flag, mode, instead

A flag given on the command line with a launch where it does not work is a parser error (exit 2); a flag left out is
never one (its default applies, or the launch has no use for it). A new flag gets a row here, or the parser refuses
to build (`launch.cli.train.make_parser`).
"""

import dataclasses
from typing import Dict, Mapping, Optional, Tuple, Union

# launch.engines.distributed.launcher.DISTRIBUTED's values: this file imports nothing (docs/hooks.py reads it alone).
DISTRIBUTED = ("local_mt", "local_mp", "ray")
ONLINE = ("single",) + DISTRIBUTED
LAUNCHES = ONLINE + ("anakin", "offline")

# How each launch is chosen on the command line, for messages.
LAUNCH_SOURCES = {
    "single": "--launch single, the default",
    "local_mt": "--launch local_mt",
    "local_mp": "--launch local_mp",
    "ray": "--launch ray",
    "anakin": "--launch anakin",
    "offline": "--dataset, or --resume of an offline run",
}


@dataclasses.dataclass(frozen=True)
class FlagRule:
    """Where a flag works, and what to do instead elsewhere.

    Attributes:
      launches: the launches with which the flag works.
      instead: what to do instead with the other launches: one text for all of them, or a text per launch.
    """

    launches: Tuple[str, ...]
    instead: Union[str, Mapping[str, str]] = ""

    def __post_init__(self):
        unknown = set(self.launches) | set(self.instead if isinstance(self.instead, Mapping) else ())
        if not unknown <= set(LAUNCHES):
            raise ValueError(f"FlagRule names unknown launches {sorted(unknown - set(LAUNCHES))}; launches are "
                             f"{LAUNCHES}.")

    def instead_in(self, launch: str) -> str:
        return self.instead.get(launch, "") if isinstance(self.instead, Mapping) else self.instead


_NO_ACTORS = "{launch} has no actor nodes: drop {flag}, or train as a distributed program (--launch local_mp)"
_RAY_ONLY = "{flag} configures a Ray program: drop it, or use --launch ray"
# Says how every agent's batch is set, naming none: an agent added with its folder and one registry line is covered.
_ANAKIN_BATCH = ("Anakin's batch of environments is set by the agent's fully jitted form (agents/<name>/anakin.py) "
                 "from its config, as that form's docstring says (PPO's, for one: --config batch_size=N); the run's "
                 "summary reports it as num_envs")

FLAGS: Dict[str, FlagRule] = {
    "--agent": FlagRule(LAUNCHES),
    "--env": FlagRule(LAUNCHES),
    "--steps": FlagRule(LAUNCHES),  # offline: learner steps
    "--seed": FlagRule(LAUNCHES),
    "--run-dir": FlagRule(LAUNCHES),
    "--overwrite": FlagRule(LAUNCHES),
    "--config": FlagRule(LAUNCHES),
    "--eval-every": FlagRule(
        ONLINE + ("offline",),
        "Anakin has no separate evaluator: drop --eval-every (the summary reports the training episodes' returns)",
    ),
    "--target-return": FlagRule(LAUNCHES),
    "--return-window": FlagRule(LAUNCHES),  # offline: evaluation episodes averaged in the summary
    "--progress-seconds": FlagRule(LAUNCHES),
    "--stop-at-return": FlagRule(LAUNCHES),  # distributed and offline: with --eval-every > 0
    "--launch": FlagRule(
        ONLINE + ("anakin",),
        "an offline run learns in one process from its dataset: drop {flag} {value}, or drop --dataset to train "
        "online with {flag} {value}",
    ),
    "--actors": FlagRule(DISTRIBUTED, {
        "single": _NO_ACTORS,
        "offline": "an offline run has no actors: drop {flag}",
        "anakin": "Anakin runs no actor processes: drop {flag} (" + _ANAKIN_BATCH + ")",
    }),
    "--ray-address": FlagRule(("ray",), _RAY_ONLY),
    # single: with --replay reverb; --replay local starts no server (the parser refuses the pair).
    "--bind-address": FlagRule(DISTRIBUTED + ("single",), "{launch} starts no server: drop {flag}"),
    "--ray-resources": FlagRule(("ray",), _RAY_ONLY),
    "--ray-max-restarts": FlagRule(("ray",), _RAY_ONLY),
    "--num-envs": FlagRule(ONLINE, {
        "anakin": _ANAKIN_BATCH + ": drop {flag}",
        "offline": "an offline run steps no environments but the evaluator's: drop {flag}",
    }),
    "--inference": FlagRule(
        DISTRIBUTED,
        "{flag} says where a distributed program's actors run their policy; {launch} has no inference node: use "
        "--launch local_mt, local_mp or ray (with --actors N), or drop {flag}",
    ),
    "--replay": FlagRule(("single", "ray"), {
        **{launch: "a Launchpad program's nodes share one Reverb server: drop {flag}"
           for launch in ("local_mt", "local_mp")},
        "anakin": "Anakin's replay lives inside its jitted function (and is already seeded): drop {flag}",
        "offline": "an offline run samples its dataset, not a replay: drop {flag}",
    }),
    "--seeds": FlagRule(
        ("anakin",), "{flag} trains several seeds in one vmapped call, with --launch anakin only: give one --seed",
    ),
    "--checkpoint-every": FlagRule(LAUNCHES),
    "--tensorboard": FlagRule(LAUNCHES),
    "--resume": FlagRule(LAUNCHES),
    # --dataset makes the mode offline: given with --launch, --launch is the flag refused.
    "--dataset": FlagRule(("offline",)),
    "--preset": FlagRule(
        ONLINE + ("anakin",),
        "presets hold hyperparameters of agents that learn online: drop {flag}, and set the agent's fields with "
        "--config FIELD=VALUE",
    ),
    "--compilation-cache": FlagRule(LAUNCHES),
    "--list-config": FlagRule(LAUNCHES),  # lists the agent's config and runs nothing
}


def refusal(flag: str, launch: str, value: object = "") -> Optional[str]:
    """None if `flag` works with `launch`; else the message that refuses it, naming the flag, the launch (as "mode
    <launch>") and what to do instead (`value`, the flag's value as given, may be part of that)."""
    rule = FLAGS[flag]
    if launch in rule.launches:
        return None
    instead = rule.instead_in(launch).format(flag=flag, value=value, launch=f"mode {launch}")
    return f"{flag} does not work in mode {launch} ({LAUNCH_SOURCES[launch]}){': ' + instead if instead else ''}."
