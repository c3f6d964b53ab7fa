"""Optional packages a run needs, checked before anything is built or written: a missing one is one line.

    missing_package(launch="local_mp", replay="local", environment="CartPole-v1", tensorboard=False)
    # -> "--launch local_mp needs dm-launchpad, which exists only for Python 3.10 (the classic stack): ..."

Each launch, environment family and flag that needs a package outside the core install names it here with the
install that brings it (an extra of setup.py, or the classic stack where a package has no wheel for this Python).
The command line turns the message into a parser error (exit 2), so a missing package never ends a run as a
traceback part way through. Only whether a module can be found is checked (`importlib.util.find_spec`): nothing
is imported.
"""

import dataclasses
import importlib.util
import sys
from typing import Optional

import gymnasium

_THIS_PYTHON = f"Python {sys.version_info.major}.{sys.version_info.minor}"
# dm-reverb and dm-launchpad publish wheels for Python 3.10 at the newest (docs/stacks.md).
CLASSIC_STACK = (
    f"which exists only for Python 3.10 (the classic stack; this is {_THIS_PYTHON}): `make venv-launchpad`, "
    f"then run it with .venv-launchpad/bin/python"
)


@dataclasses.dataclass(frozen=True)
class Requirement:
    """A package some part of a run imports.

    Attributes:
      module: the module imported (what `find_spec` looks for).
      package: its name on PyPI, as the message says it.
      install: how to get it, the end of the message's sentence.
    """

    module: str
    package: str
    install: str

    def message(self, what: str) -> Optional[str]:
        """None if the module can be found; else the one line that says `what` needs it and how to install it."""
        if installed(self.module):
            return None
        return f"{what} needs {self.package}, {self.install}."


def installed(module: str) -> bool:
    """Whether `module` can be imported here (found on the path; not imported)."""
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def _extra(name: str) -> str:
    return f"which is not installed: pip install -e '.[{name}]'"


LAUNCHPAD = Requirement("launchpad", "dm-launchpad", CLASSIC_STACK)
REVERB = Requirement("reverb", "dm-reverb", CLASSIC_STACK)
RAY = Requirement("ray", "ray", _extra("ray"))
GYMNAX = Requirement("gymnax", "gymnax", _extra("anakin"))
JAXMARL = Requirement("jaxmarl", "jaxmarl",
                      "which is not installed (it needs Python 3.11+): pip install -e '.[multiagent]'")
MINARI = Requirement("minari", "minari", _extra("offline"))
TENSORBOARD = Requirement("tensorboardX", "tensorboardX", _extra("tensorboard"))
PETTINGZOO = Requirement("mpe2", "mpe2 (PettingZoo's MPE)", _extra("multiagent"))
MINATAR = Requirement("minatar", "MinAtar", _extra("minatar"))
MUJOCO = Requirement("mujoco", "mujoco", _extra("mujoco"))
DM_CONTROL = Requirement("dm_control", "dm-control", _extra("dmc"))
BRAX = Requirement("brax", "brax", "which is not installed (today's stack, Python 3.11+): pip install -e '.[brax]'")
PLAYGROUND = Requirement("mujoco_playground", "playground (MuJoCo Playground)",
                         "which is not installed (today's stack, Python 3.11+): pip install -e '.[playground]'")

# Environment id prefixes and the package behind them (gymnasium's own MuJoCo tasks are found by entry point).
_ENVIRONMENT_FAMILIES = (("mpe/", PETTINGZOO), ("MinAtar/", MINATAR), ("gymnax/", GYMNAX), ("jaxmarl/", JAXMARL),
                         ("dm_control/", DM_CONTROL), ("brax/", BRAX), ("playground/", PLAYGROUND))
_MUJOCO_ENTRY_POINT = "gymnasium.envs.mujoco"


def missing_package(
    *, launch: str, replay: Optional[str], environment: Optional[str], tensorboard: bool
) -> Optional[str]:
    """The message for the first package the run lacks (None if it has them all).

    Args:
      launch: one of `launch.cli.options.LAUNCHES`.
      replay: the replay of a single-process run or a Ray program (`--replay`), or None where it does not apply.
      environment: the environment id (`--env`), or None.
      tensorboard: whether TensorBoard files are asked for.
    """
    if launch in ("local_mt", "local_mp"):
        found = LAUNCHPAD.message(f"--launch {launch}") or REVERB.message(f"--launch {launch} (its replay node)")
    elif launch == "ray":
        # The Ray engine's replay node serves the local replay's tables (launch.engines.distributed.replay_node),
        # or is a Reverb server with --replay reverb.
        found = RAY.message("--launch ray") or (
            REVERB.message("--launch ray --replay reverb") if replay == "reverb" else None)
    elif launch == "offline":
        found = MINARI.message("--dataset")
    elif launch == "anakin":
        found = GYMNAX.message("--launch anakin")
    else:
        found = REVERB.message("--replay reverb") if replay == "reverb" else None
    return found or _environment_package(environment) or (
        TENSORBOARD.message("--tensorboard") if tensorboard else None
    )


def _environment_package(environment: Optional[str]) -> Optional[str]:
    if not environment:
        return None
    for prefix, requirement in _ENVIRONMENT_FAMILIES:
        if environment.startswith(prefix):
            return requirement.message(f"--env {environment}")
    spec = gymnasium.envs.registry.get(environment)
    entry_point = getattr(spec, "entry_point", None)
    if isinstance(entry_point, str) and entry_point.startswith(_MUJOCO_ENTRY_POINT):
        return MUJOCO.message(f"--env {environment}")
    return None
