"""Which flag of `python -m launch` works in which mode: the one table the parser checks and its tests are made from.

A run's mode is `offline` when it learns from a dataset (`--dataset`, or `--resume` of an offline run), else its
`--launch` (or the resumed run's; `single` by default):

    mode = "offline" if dataset else launch or "single"
    refusal("--num-envs", "anakin", "4")   # None where the flag works, else the parser's message: flag, mode, instead

A flag given on the command line in a mode where it does not work is a parser error (exit 2); a flag left out is
never one (its default applies, or the mode has no use for it). A new flag gets a row here, or the parser refuses to
build (`launch.cli.train.make_parser`).
"""

import dataclasses
from typing import Dict, Mapping, Optional, Tuple, Union

from launch.engines.distributed.launcher import DISTRIBUTED
ONLINE = ("single",) + DISTRIBUTED
MODES = ONLINE + ("anakin", "offline")

# How each mode is chosen on the command line, for messages.
MODE_SOURCES = {
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
      modes: the modes in which the flag works.
      instead: what to do instead in the other modes: one text for all of them, or a text per mode.
    """

    modes: Tuple[str, ...]
    instead: Union[str, Mapping[str, str]] = ""

    def __post_init__(self):
        unknown = set(self.modes) | set(self.instead if isinstance(self.instead, Mapping) else ())
        if not unknown <= set(MODES):
            raise ValueError(f"FlagRule names unknown modes {sorted(unknown - set(MODES))}; modes are {MODES}.")

    def instead_in(self, mode: str) -> str:
        return self.instead.get(mode, "") if isinstance(self.instead, Mapping) else self.instead


_NO_ACTORS = "{mode} has no actor nodes: drop {flag}, or train as a distributed program (--launch local_mp)"
_RAY_ONLY = "{flag} configures a Ray program: drop it, or use --launch ray"
# Says how every agent's batch is set, naming none: an agent added with its folder and one registry line is covered.
_ANAKIN_BATCH = ("Anakin's batch of environments is set by the agent's fully jitted form (agents/<name>/anakin.py) "
                 "from its config, as that form's docstring says (PPO's, for one: --config batch_size=N); the run's "
                 "summary reports it as num_envs")

FLAGS: Dict[str, FlagRule] = {
    "--agent": FlagRule(MODES),
    "--env": FlagRule(MODES),
    "--steps": FlagRule(MODES),  # offline: learner steps
    "--seed": FlagRule(MODES),
    "--run-dir": FlagRule(MODES),
    "--overwrite": FlagRule(MODES),
    "--config": FlagRule(MODES),
    "--eval-every": FlagRule(
        ONLINE + ("offline",),
        "Anakin has no separate evaluator: drop --eval-every (the summary reports the training episodes' returns)",
    ),
    "--target-return": FlagRule(MODES),
    "--return-window": FlagRule(MODES),  # offline: evaluation episodes averaged in the summary
    "--progress-seconds": FlagRule(MODES),
    "--stop-at-return": FlagRule(MODES),  # distributed and offline: with --eval-every > 0
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
    "--bind-address": FlagRule(DISTRIBUTED + ("single",), "{mode} starts no server: drop {flag}"),
    "--ray-resources": FlagRule(("ray",), _RAY_ONLY),
    "--ray-max-restarts": FlagRule(("ray",), _RAY_ONLY),
    "--num-envs": FlagRule(ONLINE, {
        "anakin": _ANAKIN_BATCH + ": drop {flag}",
        "offline": "an offline run steps no environments but the evaluator's: drop {flag}",
    }),
    "--inference": FlagRule(
        DISTRIBUTED,
        "{flag} says where a distributed program's actors run their policy; {mode} has no inference node: use "
        "--launch local_mt, local_mp or ray (with --actors N), or drop {flag}",
    ),
    "--replay": FlagRule(("single", "ray"), {
        **{mode: "a Launchpad program's nodes share one Reverb server: drop {flag}" for mode in ("local_mt", "local_mp")},
        "anakin": "Anakin's replay lives inside its jitted function (and is already seeded): drop {flag}",
        "offline": "an offline run samples its dataset, not a replay: drop {flag}",
    }),
    "--seeds": FlagRule(
        ("anakin",), "{flag} trains several seeds in one vmapped call, with --launch anakin only: give one --seed",
    ),
    "--checkpoint-every": FlagRule(MODES),
    "--tensorboard": FlagRule(MODES),
    "--resume": FlagRule(MODES),
    # --dataset makes the mode offline: given with --launch, --launch is the flag refused.
    "--dataset": FlagRule(("offline",)),
    "--preset": FlagRule(
        ONLINE + ("anakin",),
        "presets hold hyperparameters of agents that learn online: drop {flag}, and set the agent's fields with "
        "--config FIELD=VALUE",
    ),
    "--compilation-cache": FlagRule(MODES),
    "--list-config": FlagRule(MODES),  # lists the agent's config and runs nothing
}


def refusal(flag: str, mode: str, value: object = "") -> Optional[str]:
    """None if `flag` works in `mode`; else the message that refuses it, naming the flag, the mode and what to do
    instead (`value`, the flag's value as given, may be part of that)."""
    rule = FLAGS[flag]
    if mode in rule.modes:
        return None
    instead = rule.instead_in(mode).format(flag=flag, value=value, mode=f"mode {mode}")
    return f"{flag} does not work in mode {mode} ({MODE_SOURCES[mode]}){': ' + instead if instead else ''}."
