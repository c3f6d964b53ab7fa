"""The DeepMind Control Suite's tasks by id: `dm_control/<domain>-<task>`, native dm_env environments.

    environment = make_control_suite_environment("dm_control/cartpole-swingup", seed=0)
    environment.observation_spec()   # Array((5,), float32, 'position[0:3],velocity[3:5]')
    frame = render_frame(environment)   # [240, 320, 3] uint8, MuJoCo's offscreen renderer
    suite = load_suite()                 # dm_control.suite itself, its renderer chosen as below

A task is `suite.load(domain, task, task_kwargs={"random": seed})`: the seed draws its initial states. Its
episodes last 1,000 steps (every task's own limit but LQR's, which has none; a step limit makes it 1,000 too) and
end as a truncation: the suite's discount stays 1.0 at the last step, so agents bootstrap from it. The suite speaks
float64: observations, rewards and discounts come out as float32 (actions go back as float64), and the dict of
observations as one vector (`acmelike.wrappers.ConcatObservationWrapper`, keys sorted).

Rendering goes through MuJoCo's OpenGL context, chosen by MUJOCO_GL when dm_control is first imported. On a
machine with a display dm_control picks GLFW; on one without (no DISPLAY) and no MUJOCO_GL set, this module sets
MUJOCO_GL to `egl` where libEGL is found, else `osmesa` where libOSMesa is, else `disabled` (training works,
rendering does not). A headless machine renders with EGL (on Debian: libegl1, libegl-mesa0 and libgl1-mesa-dri
for Mesa's software renderer; an NVIDIA driver brings its own) or OSMesa (libosmesa6, slower).
"""

import ctypes.util
import difflib
import os
from typing import Dict, Tuple

import dm_env
import numpy as np

from acmelike.wrappers.concatenate import concatenate_state_nest
from acmelike.wrappers.single_precision import SinglePrecisionWrapper
from acmelike.wrappers.step_limit import StepLimitWrapper

CONTROL_SUITE_PREFIX = "dm_control/"
EPISODE_STEPS = 1000
HEADLESS_RENDERING = (
    "A machine without a display renders through EGL (MUJOCO_GL=egl; on Debian: apt-get install libegl1 "
    "libegl-mesa0 libgl1-mesa-dri) or OSMesa (MUJOCO_GL=osmesa; apt-get install libosmesa6), set before dm_control "
    "is first imported; MUJOCO_GL=disabled trains without rendering."
)


def _choose_renderer() -> None:
    """Sets MUJOCO_GL for a machine without a display, unless it is set (see the module docstring)."""
    if "MUJOCO_GL" in os.environ or os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"):
        return
    if ctypes.util.find_library("EGL"):
        os.environ["MUJOCO_GL"] = "egl"
    elif ctypes.util.find_library("OSMesa"):
        os.environ["MUJOCO_GL"] = "osmesa"
    else:
        os.environ["MUJOCO_GL"] = "disabled"


def load_suite():
    """`dm_control.suite`, imported once MUJOCO_GL suits this machine (`_choose_renderer`): import the suite through
    here, or set MUJOCO_GL yourself, where there is no display. A renderer that fails to load says what to do."""
    _choose_renderer()
    try:
        from dm_control import suite  # the dmc extra: imported only for a Control Suite task
    except ModuleNotFoundError as error:
        if error.name != "dm_control":
            raise
        raise ModuleNotFoundError("The Control Suite's tasks (dm_control/...) need dm-control, which is not "
                                  "installed: pip install -e '.[dmc]'", name="dm_control") from None
    except (ImportError, AttributeError, RuntimeError) as error:  # its renderer's import (EGL/OSMesa) failed
        raise RuntimeError(
            f"dm_control failed to load its OpenGL renderer (MUJOCO_GL={os.environ.get('MUJOCO_GL')}): {error}. "
            f"{HEADLESS_RENDERING}"
        ) from error
    return suite


def control_suite_tasks() -> Dict[str, Tuple[str, ...]]:
    """Each Control Suite domain's tasks (the benchmarking and the extra ones), domains sorted."""
    tasks: Dict[str, Tuple[str, ...]] = {}
    for domain, task in load_suite().ALL_TASKS:
        tasks[domain] = tasks.get(domain, ()) + (task,)
    return dict(sorted(tasks.items()))


def parse_control_suite_id(name: str) -> Tuple[str, str]:
    """(domain, task) of `dm_control/<domain>-<task>`; a ValueError naming the valid ones if there is no such task."""
    tasks = control_suite_tasks()
    domain, _, task = name[len(CONTROL_SUITE_PREFIX):].partition("-")
    if name.startswith(CONTROL_SUITE_PREFIX) and task in tasks.get(domain, ()):
        return domain, task
    raise ValueError(_unknown_task_message(name, domain, task, tasks))


def _unknown_task_message(name: str, domain: str, task: str, tasks: Dict[str, Tuple[str, ...]]) -> str:
    """One line: what is wrong with `name`, the closest ids, and every domain with its tasks."""
    if domain in tasks:
        named = f"no task {task!r}" if task else "no task named (the ids are dm_control/<domain>-<task>)"
        problem = f"the domain {domain!r} has {named}; its tasks: {', '.join(tasks[domain])}"
    else:
        problem = f"no domain {domain!r} (the ids are {CONTROL_SUITE_PREFIX}<domain>-<task>)"
    ids = [f"{CONTROL_SUITE_PREFIX}{d}-{t}" for d, names in tasks.items() for t in names]
    close = difflib.get_close_matches(name, ids, n=3, cutoff=0.6)
    suggestion = f" Did you mean {', '.join(close)}?" if close else ""
    listing = "; ".join(f"{d}: {', '.join(names)}" for d, names in tasks.items())
    return f"Unknown Control Suite task {name!r}: {problem}.{suggestion} Domains and their tasks: {listing}."


def check_control_suite_id(name: str) -> None:
    """Raises the ValueError of `parse_control_suite_id` if `name` is no Control Suite task."""
    parse_control_suite_id(name)


def make_control_suite_environment(name: str, seed: int) -> dm_env.Environment:
    """The task `dm_control/<domain>-<task>` seeded `seed`, as agents take it (module docstring): float32, one
    observation vector, 1,000-step episodes."""
    domain, task = parse_control_suite_id(name)
    environment = load_suite().load(domain, task, task_kwargs={"random": seed})
    environment = StepLimitWrapper(SinglePrecisionWrapper(environment), step_limit=EPISODE_STEPS)
    return concatenate_state_nest(environment)


def render_frame(environment: dm_env.Environment, height: int = 240, width: int = 320) -> np.ndarray:
    """The rgb frame ([height, width, 3] uint8) of a Control Suite environment (wrapped or not), from camera 0;
    a RuntimeError saying what a machine without a display needs if MuJoCo cannot render here."""
    try:
        return np.asarray(environment.physics.render(height=height, width=width, camera_id=0))
    except RuntimeError as error:
        raise RuntimeError(
            f"MuJoCo cannot render here (MUJOCO_GL={os.environ.get('MUJOCO_GL')}): {error}. "
            f"{HEADLESS_RENDERING}"
        ) from error
