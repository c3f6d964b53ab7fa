"""train: run any experiment config, on any engine, with the command line's care of the run directory.

    config = launch.make_experiment_config(agent="dqn", environment="CartPole-v1", max_num_actor_steps=50_000,
                                           run_dir="runs/dqn")
    summary = launch.train(config, overwrite=True)         # a new run; replaces what runs/dqn held (--overwrite)
    summary = launch.train(config, resume=True)            # on from the latest checkpoint (--resume)
    summary = launch.train(config, launch="local_mp", actors=2, checkpoint_every_minutes=1)

The Python form of `python -m launch` (`launch.cli.train`, which calls this): the same options, as `RunOptions`'
fields (launch, actors, resume, checkpoint_every_minutes, tensorboard, bind_address) plus `overwrite`; the same
lock on the run directory, and the same refusals before anything is written. So a notebook cell or a script can be
run again at will: `overwrite=True` starts over, `resume=True` goes on. An agent of your own comes in through
`make_experiment_config(agent=MY_AGENT, ...)` (an `AgentDefinition`, registered or not) and runs on every engine.
"""

import os
from typing import Any, Dict

from launch.engines.anakin import AnakinConfig, run_anakin
from launch.engines.distributed.launcher import run_distributed
from launch.engines.offline import run_offline
from launch.engines.single_process import run_single_process
from launch.experiments.config import OfflineExperimentConfig
from launch.lifecycle.run_directory import (
    RUN_OPTIONS,
    RunDirectoryLock,
    RunOptions,
    prepare_new_run_dir,
    read_run_options,
)


def train(config, *, overwrite: bool = False, ray_options=None, **options: Any) -> Dict[str, Any]:
    """Trains `config` and returns its summary (for one process, a `RunResult` that also holds the parameters).

    Args:
      config: an `ExperimentConfig` (`launch.make_experiment_config`), an `OfflineExperimentConfig` or an
        Anakin `AnakinConfig` (whose own fields say how it runs).
      overwrite: a new run may replace what `config.run_dir` holds (without it, a non-empty run directory is
        refused: RunDirectoryRefused, a ValueError saying what to pass).
      ray_options: `launch.engines.distributed.ray_engine.RayOptions`, with `launch="ray"`.
      **options: `RunOptions` fields: `launch` ("single", "local_mt", "local_mp", "ray"; an
        `OfflineExperimentConfig`'s is "offline", given or not), `actors`, `resume`, `checkpoint_every_minutes`,
        `tensorboard`, `bind_address`. `resume=True` goes on from the run's latest checkpoint (a fresh start if it
        has none), launched as it was launched first.

    With a run directory, this process holds its lock (`RunDirectoryLock`) while the run lasts.
    """
    options = _run_options(config, options)
    run_dir = config.run_dir
    if options.resume and overwrite:
        raise ValueError("resume=True continues the run in run_dir and overwrite=True would erase it: pass one.")
    if run_dir and options.resume and not isinstance(config, AnakinConfig):
        _check_launched_as_before(run_dir, options)
    lock = RunDirectoryLock(run_dir) if run_dir else None
    try:
        if run_dir and not options.resume:
            prepare_new_run_dir(run_dir, overwrite)
        if isinstance(config, AnakinConfig):
            return run_anakin(config)
        if isinstance(config, OfflineExperimentConfig):
            return run_offline(config, options)
        if options.launch == "single":
            return run_single_process(config, options)
        return run_distributed(config, num_actors=options.actors, launch=options.launch, options=options,
                               ray_options=ray_options)
    finally:
        if lock is not None:
            lock.release()


def _run_options(config, options: Dict[str, Any]) -> RunOptions:
    """`RunOptions(**options)`, whose launch an `OfflineExperimentConfig` decides: "offline", as the command line's
    --dataset records it (run_options.json, the summary). Another launch given with one is refused."""
    if isinstance(config, OfflineExperimentConfig):
        launch = options.get("launch", "offline")
        if launch != "offline":
            raise ValueError(f"launch={launch!r}: an OfflineExperimentConfig runs offline, in this process; leave "
                             f"launch out (or pass launch='offline').")
        options = {**options, "launch": "offline"}
    return RunOptions(**options)


def _check_launched_as_before(run_dir: str, options: RunOptions) -> None:
    """A run's checkpoints hold what its runner saves: it resumes on the engine it was launched on."""
    if not os.path.exists(os.path.join(run_dir, RUN_OPTIONS)):  # nothing launched there yet: a fresh start
        return
    saved = read_run_options(run_dir)
    if options.launch == "offline" and saved.launch == "single":
        return  # an offline run that launch.train recorded as "single" before it recorded "offline"
    if saved.launch == "offline" != options.launch:
        raise ValueError(f"resume=True: the run in {run_dir} is an offline run (its run_options.json): resume it "
                         f"with its OfflineExperimentConfig (launch.make_offline_experiment_config).")
    if saved.launch != options.launch:
        raise ValueError(
            f"resume=True: the run in {run_dir} was launched with launch={saved.launch!r} (its run_options.json), "
            f"and its checkpoints hold what that engine saves: pass launch={saved.launch!r}"
            f"{f', actors={saved.actors}' if saved.launch != 'single' else ''}."
        )
