"""run_anakin: a whole training run as one jitted function of the seed, vmapped over seeds (Anakin).

For environments written in JAX: gymnax (`gymnax/<id>`, single-agent), Brax's locomotion tasks (`brax/<task>`, for
the continuous agents; `pip install -e '.[brax]'`), MuJoCo Playground's Control Suite tasks (`playground/<task>`, for
the continuous agents; `pip install -e '.[playground]'`) and JaxMARL's MPE (`jaxmarl/<id>`, multi-agent, for
IPPO/MAPPO; `pip install jaxmarl`, Python >= 3.11). Per seed, one iteration collects rows from a batch of
environments (`vmap`, `lax.scan` over steps) and applies the agent's own pure `update_step`
(`agents/<name>/anakin.py`). Iterations are scanned in calls of `iterations_per_call`; between calls the host
turns episode returns into the same logs, learning curve and summary as the other runners, prints progress and
checks `stop_at_average_return`. Nothing here imports Reverb, TensorFlow or Launchpad.

With several devices (GPUs, or CPU devices from XLA_FLAGS=--xla_force_host_platform_device_count=N) whose number
divides the number of seeds, the seeds are split over them (`seed_sharding`): each device trains its share, and the run
computes what it would on one device (tests/engines/test_anakin_sharding.py).

With a run directory and `checkpoint_every_minutes`, every seed's whole carry (learner state, environments,
on-device replay, keys) and the logs' counts are saved between calls (`<run_dir>/checkpoints/`, also at Ctrl-C or
SIGTERM); `resume=True` continues from the latest one, and the resumed run computes what the uninterrupted run
would have (the same calls in the same order).

    summaries = run_anakin(AnakinConfig(agent="ppo", environment="gymnax/CartPole-v1",
                                        max_num_actor_steps=500_000, seeds=(0, 1, 2, 3)))
"""

import concurrent.futures
import contextlib
import dataclasses
import gc
import json
import os
import time
from typing import Any, Callable, Dict, List, NamedTuple, Optional, Sequence, Tuple

import jax
import jax.numpy as jnp
import numpy as np

from acmelike import files
from acmelike.anakin import (GYMNAX_PREFIX, JAXMARL_PREFIX, JaxEnvironment, make_gymnax_environment,
                             make_jaxmarl_environment)
from acmelike.anakin.brax import BRAX_PREFIX, check_brax_id, make_brax_environment
from acmelike.anakin.jaxmarl import check_jaxmarl_id
from acmelike.anakin.playground import PLAYGROUND_PREFIX, check_playground_id, make_playground_environment
from acmelike.anakin.agent import SEEDS_AXIS, AnakinAgent, IterationOutputs
from acmelike.checkpointing import CheckpointError, Checkpointer, check_metadata, read_json_state, read_metadata
from acmelike.core import Saveable
from acmelike.learners import NonFiniteLossError
from acmelike.loggers.plotting import plot_run_learning_curve
from launch.experiments.config import check_seed
from launch.experiments.interrupts import StopRequests
from launch.experiments.make import environment_threshold, make_agent_config
from launch.experiments.overrides import assignments
from launch.experiments.summaries import ReturnTracker, agent_returns, average_return, run_summary, write_summary
from launch.lifecycle.checkpoints import resumable_checkpoint
from launch.lifecycle.logs import log_sizes, run_logger, truncate_logs
from launch.lifecycle.run_directory import CONFIG_FILE, RunOptions, read_run_options, write_run_options
from launch.registry import agent_definition, anakin_agents


def parse_seeds(text: str) -> Tuple[int, ...]:
    """"3" -> (3,); "0-15" -> (0, ..., 15); "0,4,9" and "0-3,8" also. ValueError naming the bad part."""
    seeds: List[int] = []
    for part in text.split(","):
        bounds = part.strip().split("-")
        try:
            first, last = int(bounds[0]), int(bounds[-1])
            if len(bounds) > 2 or first > last:
                raise ValueError
        except ValueError:
            raise ValueError(
                f"--seeds: cannot read {part!r} in {text!r}; write seeds as 7, 0-15 (inclusive) or 0,3,8-11."
            ) from None
        check_seed(last, "--seeds")
        seeds.extend(range(first, last + 1))
    if len(set(seeds)) != len(seeds):
        raise ValueError(f"--seeds: {text!r} names a seed twice.")
    return tuple(seeds)


@dataclasses.dataclass(frozen=True)
class AnakinConfig:
    """One Anakin run.

    Attributes:
      agent: a registered agent with an Anakin form (`AgentDefinition.anakin`; `launch.registry.anakin_agents()`).
      environment: `gymnax/<id>` (e.g. gymnax/CartPole-v1) for single-agent agents, also `brax/<task>` (e.g.
        brax/inverted_pendulum) and `playground/<task>` (e.g. playground/CartpoleSwingup) for continuous ones,
        `jaxmarl/<id>` (e.g. jaxmarl/MPE_simple_spread_v3) for multi-agent ones.
      max_num_actor_steps: rows to collect per seed (environment steps; PPO's padding rows count too, see
        `acmelike.anakin.streams`), rounded down to whole iterations (at least one).
      seeds: trained side by side in one vmapped call.
      agent_config: the agent's config (None: its registered defaults).
      target_return: the return that counts as solved (None: gymnasium's `reward_threshold` of the same id, if any).
      return_window: episodes averaged for `average_return_last_<N>` and `stop_at_average_return`.
      run_dir: CSV logs, learning_curve.png and summary.json (one directory per seed when several).
      stop_at_average_return: stop after the call in which every seed's last `return_window` episodes average at
        least this.
      iterations_per_call: iterations scanned per jitted call (progress and early stopping happen between calls).
      progress_period_s: seconds between progress lines (0: none).
      tensorboard: also write TensorBoard event files (`<seed's run_dir>/tensorboard/`); needs `run_dir`.
      checkpoint_every_minutes: minutes between checkpoints in `<run_dir>/checkpoints/` (one also when a signal
        stops the run); None: none. Needs `run_dir`.
      resume: continue from the latest checkpoint in `run_dir` (CheckpointError if there is none, or if it is
        another run's: agent, environment, seeds, budget and agent config must be the same).
    """

    agent: str
    environment: str
    max_num_actor_steps: int
    seeds: Tuple[int, ...] = (0,)
    agent_config: Any = None
    target_return: Optional[float] = None
    return_window: int = 20
    run_dir: Optional[str] = None
    stop_at_average_return: Optional[float] = None
    iterations_per_call: int = 64
    progress_period_s: float = 5.0
    tensorboard: bool = False
    checkpoint_every_minutes: Optional[float] = None
    resume: bool = False

    def __post_init__(self):
        if self.agent not in anakin_agents():
            raise ValueError(
                f"Agent {self.agent!r} has no Anakin (fully jitted) form. Choose one of: {', '.join(anakin_agents())}."
            )
        _check_environment_id(self.agent, self.environment)
        if self.max_num_actor_steps < 1:
            raise ValueError(f"AnakinConfig.max_num_actor_steps must be >= 1, got {self.max_num_actor_steps}.")
        if not self.seeds:
            raise ValueError("AnakinConfig.seeds must name at least one seed.")
        for seed in self.seeds:
            check_seed(seed, "AnakinConfig.seeds")
        if self.return_window < 1:
            raise ValueError(f"AnakinConfig.return_window must be >= 1, got {self.return_window}.")
        if self.iterations_per_call < 1:
            raise ValueError(f"AnakinConfig.iterations_per_call must be >= 1, got {self.iterations_per_call}.")
        if self.tensorboard and not self.run_dir:
            raise ValueError("AnakinConfig.tensorboard writes under run_dir: set run_dir (--run-dir DIR) too.")
        if (self.checkpoint_every_minutes is not None or self.resume) and not self.run_dir:
            raise ValueError("AnakinConfig checkpoints live in run_dir: set run_dir (--run-dir DIR) too.")
        if self.checkpoint_every_minutes is not None and not self.checkpoint_every_minutes > 0:
            raise ValueError(f"AnakinConfig.checkpoint_every_minutes must be > 0, got "
                             f"{self.checkpoint_every_minutes}.")

    @property
    def resolved_agent_config(self) -> Any:
        return self.agent_config if self.agent_config is not None else agent_definition(self.agent).config_class()

    @property
    def resolved_target_return(self) -> Optional[float]:
        if self.target_return is not None:
            return self.target_return
        if not self.environment.startswith(GYMNAX_PREFIX):
            return None  # gymnasium knows no JaxMARL ids
        return environment_threshold(self.environment[len(GYMNAX_PREFIX):])


class _PhysicsFamily(NamedTuple):
    """A family of physics tasks for the continuous agents: how its ids are checked and its environments made."""

    check: Callable[[str], Any]  # a ValueError naming the family's tasks if the id is none of them
    make: Callable[[str], JaxEnvironment]


# By id prefix.
_PHYSICS_FAMILIES = {
    BRAX_PREFIX: _PhysicsFamily(check_brax_id, make_brax_environment),
    PLAYGROUND_PREFIX: _PhysicsFamily(check_playground_id, make_playground_environment),
}


def _physics_family(name: str) -> Optional[_PhysicsFamily]:
    """The family whose prefix `name` has, or None."""
    return next((family for prefix, family in _PHYSICS_FAMILIES.items() if name.startswith(prefix)), None)


def _check_environment_id(agent: str, environment: str) -> None:
    """ValueError unless `environment` names a JAX environment of the kind `agent` acts in: `jaxmarl/<id>` for a
    multi-agent agent (jaxmarl installed, the id known), `gymnax/<id>` for the others, or `brax/<task>` or
    `playground/<task>` for a continuous one (the package installed, the task known)."""
    multiagent = agent_definition(agent).multiagent
    continuous = agent_definition(agent).action_space == "continuous"
    # Before anything compiles: a missing package or an unknown task is a command-line error.
    family = _physics_family(environment)
    if continuous and not multiagent and family:
        family.check(environment)
        return
    prefix, example = ((JAXMARL_PREFIX, "MPE_simple_spread_v3") if multiagent
                       else (GYMNAX_PREFIX, "Pendulum-v1" if continuous else "CartPole-v1"))
    if not environment.startswith(prefix):
        kind = "a multi-agent" if multiagent else "an"
        raise ValueError(
            f"--launch anakin with {agent} needs {kind} environment written in JAX, named {prefix}<id> "
            f"(e.g. {prefix}{example}"
            f"{', brax/inverted_pendulum or playground/CartpoleSwingup' if continuous else ''}), got {environment!r}."
        )
    if multiagent:
        check_jaxmarl_id(environment)  # before anything compiles: a missing jaxmarl is a command-line error


def make_environment(name: str) -> JaxEnvironment:
    """The JAX environment `name` names: `jaxmarl/<id>`, `brax/<task>`, `playground/<task>` or `gymnax/<id>`."""
    family = _physics_family(name)
    if family:
        return family.make(name)
    return make_jaxmarl_environment(name) if name.startswith(JAXMARL_PREFIX) else make_gymnax_environment(name)


def make_agent(config: AnakinConfig) -> AnakinAgent:
    make_anakin_agent = agent_definition(config.agent).anakin
    return make_anakin_agent(make_environment(config.environment), config.resolved_agent_config)


def seed_sharding(num_seeds: int) -> Optional[jax.sharding.Sharding]:
    """The seeds axis split evenly over `jax.devices()` when there are several and their number divides
    `num_seeds`; None (every seed on the default device) otherwise. Each seed's computation is its own, so a
    sharded run computes what a one-device run does; only `SEEDS_AXIS` reductions cross devices."""
    devices = jax.devices()
    if len(devices) < 2 or num_seeds % len(devices):
        return None
    mesh = jax.sharding.Mesh(np.asarray(devices), (SEEDS_AXIS,))
    return jax.sharding.NamedSharding(mesh, jax.sharding.PartitionSpec(SEEDS_AXIS))


def place_seeds(tree, sharding: Optional[jax.sharding.Sharding]):
    """`tree` (every leaf with a leading seeds axis) laid out by `sharding`; as it is if None."""
    return tree if sharding is None else jax.device_put(tree, sharding)


def over_seeds(fn, in_axes=0):
    """`fn`, a function of one seed, applied to every seed of its arguments' leading axis (where `in_axes` is 0;
    None: shared by every seed), under the axis name `SEEDS_AXIS`.

    Several seeds are vmapped. One seed is not: `fn` runs on that seed's slice with the axis bound at size 1 and
    nothing batched, so `SEEDS_AXIS` reductions are the identity and XLA compiles the one-seed program a bare loop
    would. A vmap over a single seed still batches every operation by 1, which cost DQN's fully jitted form about
    1.3 s of its 4.5 s compile on CPU (init and chunk; benchmarks/anakin_dqn.py compiles both).
    """

    def mapped(*args):
        axes = in_axes if isinstance(in_axes, tuple) else (in_axes,) * len(args)
        num_seeds = next(jax.tree_util.tree_leaves(a)[0].shape[0] for a, axis in zip(args, axes) if axis == 0)
        if num_seeds > 1:
            return jax.vmap(fn, in_axes=in_axes, axis_name=SEEDS_AXIS)(*args)
        # lax's squeeze and expand_dims, not x[0] and x[None]: jnp's indexing traced TD3's 75 carry leaves and 81
        # outputs 0.5 s slower, a quarter of its chunk's lowering (tracing and emitting) on CPU.
        args = [jax.tree_util.tree_map(lambda x: jax.lax.squeeze(x, (0,)), a) if axis == 0 else a
                for a, axis in zip(args, axes)]
        outputs = jax.vmap(fn, in_axes=None, out_axes=None, axis_size=1, axis_name=SEEDS_AXIS)(*args)
        return jax.tree_util.tree_map(lambda x: jax.lax.expand_dims(x, (0,)), outputs)

    return mapped


# XLA options for a program that runs once. On CPU, LLVM's optimisations are most of compiling an init (network,
# optimiser and replay set-up, the PRNG's threefry loops), and its one run does not win the time back: R2D2's
# fully jitted init compiled in 1.7 CPU s instead of 3.3 with them off, and ran no slower.
_RUNS_ONCE = {"xla_backend_optimization_level": 0, "xla_llvm_disable_expensive_passes": True}


def make_init(agent: AnakinAgent):
    """`init(keys [S, 2]) -> carries [S, ...]`: every seed's initial carry, jitted (on CPU, compiled as a program
    that runs once: `_RUNS_ONCE`)."""
    return jax.jit(over_seeds(agent.init), compiler_options=_RUNS_ONCE if jax.default_backend() == "cpu" else None)


def make_chunk(agent: AnakinAgent, length: int, may_skip: bool = True):
    """`chunk(carries [S, ...], num_active) -> (carries, IterationOutputs [S, length, ...])`: `length`
    iterations per seed, of which the first `num_active` run (the rest leave the carry and output NaN / False).

    With `may_skip=False` every call runs all `length` iterations (`num_active` must be `length`): no branch to
    compile, for runs whose iterations fill whole calls.
    """

    iteration = jax.jit(agent.iteration)  # traced once: `skipped` reads its shapes from the trace the branch reuses

    def skipped(carry):
        shapes = jax.eval_shape(iteration, carry)[1]
        return jax.tree_util.tree_map(
            lambda s: jnp.full(s.shape, np.nan if jnp.issubdtype(s.dtype, jnp.floating) else 0, s.dtype), shapes
        )

    def one_seed(carry, num_active):
        def body(carry, index):
            if not may_skip:
                return agent.iteration(carry)
            # `index` and `num_active` are not batched over seeds, so this stays a real branch under vmap.
            return jax.lax.cond(index < num_active, iteration, lambda c: (c, skipped(c)), carry)

        return jax.lax.scan(body, carry, jnp.arange(length))

    return jax.jit(over_seeds(one_seed, in_axes=(0, None)), donate_argnums=0)


@contextlib.contextmanager
def garbage_collection_paused():
    """Python's cyclic garbage collector off for the block (back as it was after it).

    Lowering (tracing and emitting a program) allocates millions of objects, so collections come often, and now and
    then one sweeps the oldest generation: every object of a process that has loaded JAX and flax, hundreds of
    thousands. The collector was a fifth of D4PG's fully jitted lowering on CPU (1.57 s with the collector on,
    1.24 s off, medians of 10 alternating, against 0.79 and 0.85 s for its bare loop's; 2026-12-01). The garbage
    the block leaves is collected by the first collection after it.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def compile_programs(agent: AnakinAgent, length: int, total: int, keys,
                     sharding: Optional[jax.sharding.Sharding] = None):
    """(init, chunk): `make_init` compiled for `keys` and `make_chunk` of a run of `total` iterations in calls of
    `length` (it skips only if they do not divide) compiled for the init's carries, laid out by `sharding`.

    The two are separate programs (the run calls the chunk again and again from the init's carry), where a bare
    loop is one. So XLA compiles the init on a second thread while JAX lowers the chunk (Python, holding its lock,
    which XLA's compile releases) and XLA compiles it: TD3's form on Pendulum compiled in 9.5 s of wall time on two
    CPU cores, against 11.5 s one after the other and 9.2 s for a bare loop of its pieces (medians of 5,
    benchmarks/anakin_off_policy.py's settings).
    """
    with garbage_collection_paused():
        lowered_init = make_init(agent).lower(keys)
        # The pool's exit waits for the init's compile; its future raises the init's error here.
        with concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="compile-anakin-init") as pool:
            init = pool.submit(lowered_init.compile)
            carries = jax.tree_util.tree_map(
                lambda out: jax.ShapeDtypeStruct(out.shape, out.dtype, sharding=sharding), lowered_init.out_info,
                is_leaf=lambda out: hasattr(out, "shape"))
            chunk = make_chunk(agent, length, may_skip=total % length != 0).lower(carries, length).compile()
            return init.result(), chunk


class _SeedLog:
    """One seed's episodes: ReturnTracker, actor.csv / learner.csv rows (and TensorBoard scalars), counts."""

    def __init__(self, seed: int, directory: Optional[str], tracker: ReturnTracker, tensorboard: bool = False,
                 resumed_at: Optional[Dict[str, int]] = None):
        """`resumed_at`: the seed's counts at the checkpoint a resumed run starts from (None: a new run)."""
        self.seed = seed
        self.directory = directory
        self.tracker = tracker
        self.actor_steps = 0
        self.learner_steps = 0
        # A resumed seed continues its CSV files (cut back to the checkpoint by `_resume_logs`).
        logs = dict(append=resumed_at is not None, tensorboard=tensorboard, resumed_at=resumed_at)
        self.actor_log = run_logger(directory, "actor", "actor_steps", **logs)
        self.learner_log = run_logger(directory, "learner", "learner_steps", **logs)

    def save(self) -> Dict[str, Any]:
        return {"seed": self.seed, "actor_steps": self.actor_steps, "learner_steps": self.learner_steps,
                "tracker": self.tracker.save()}

    def restore(self, state: Dict[str, Any]) -> None:
        self.actor_steps, self.learner_steps = int(state["actor_steps"]), int(state["learner_steps"])
        self.tracker.restore(state["tracker"])

    def add(self, outputs: IterationOutputs, loss_keys: Sequence[str] = ("loss",)) -> None:
        """This seed's outputs of one call: episode_return, real and each of agent_returns [I, K, B] (rows of
        iterations in order), learned and metrics [I]. An episode's row in actor.csv holds each agent's return
        beside the team's, as `EnvironmentLoop`'s do (`episode_return/<agent id>`). Raises NonFiniteLossError if an
        update's loss (each of `loss_keys`) was NaN or infinite."""
        episode_return, real, learned, metrics, by_agent = outputs
        learned = np.asarray(learned, bool)
        for key in loss_keys:
            losses = np.asarray(metrics[key])[learned]
            if not np.all(np.isfinite(losses)):
                raise NonFiniteLossError(
                    f"Anakin seed {self.seed}: an update's {key} became {losses[~np.isfinite(losses)][0]} after "
                    f"{self.learner_steps + int(np.argmin(np.isfinite(losses)))} updates. Lower the learning rate "
                    f"or check the environment's observations and rewards for NaN/inf."
                )
        num_envs = real.shape[-1]
        steps_after_row = self.actor_steps + np.cumsum(real.reshape(-1, num_envs).sum(axis=1))
        rows, envs = np.nonzero(~np.isnan(episode_return.reshape(-1, num_envs)))
        values = episode_return.reshape(-1, num_envs)[rows, envs]
        agent_columns = {f"episode_return/{agent}": np.asarray(returns).reshape(-1, num_envs)[rows, envs]
                         for agent, returns in by_agent.items()}
        for index, (row, value) in enumerate(zip(rows, values)):
            steps = int(steps_after_row[row])
            agents = {column: returns[index] for column, returns in agent_columns.items()}
            self.tracker.add(float(value), steps, agent_returns(agents))
            self.actor_log.write({"actor_steps": steps, "episodes": self.tracker.episodes, "episode_return": value,
                                  **agents})
        self.actor_steps = int(steps_after_row[-1]) if steps_after_row.size else self.actor_steps
        self.learner_steps += int(learned.sum())
        if learned.any():
            means = {name: float(np.mean(np.asarray(value)[learned])) for name, value in metrics.items()}
            self.learner_log.write({"learner_steps": self.learner_steps, "actor_steps": self.actor_steps, **means})

    def close(self) -> None:
        self.actor_log.close()
        self.learner_log.close()


def run_anakin(config: AnakinConfig) -> Dict[str, Any]:
    """Trains every seed of `config`; returns the summary (also `<run_dir>/summary.json`).

    One seed: the other runners' summary (`launch.experiments.summaries.run_summary`) plus `launch`, `num_envs`,
    `num_seeds`, `compile_seconds`. Several: `seeds` (one such summary per seed, each also written to
    `<run_dir>/seed_<n>/`), the seeds' mean `average_return_last_<N>` (and a multi-agent run's of each agent's),
    how many reached the threshold, and the whole vmapped run's `wall_seconds` and `compile_seconds`.
    """
    start = time.time()
    # Before anything compiles: a run to resume with no checkpoint is a clear error.
    resumed_from = latest_checkpoint_of(config) if config.resume else None
    agent = make_agent(config)
    total = max(1, config.max_num_actor_steps // agent.rows_per_iteration)
    length = min(config.iterations_per_call, total)
    if config.run_dir and not config.resume:
        write_anakin_config(config)
    sharding, carries, chunk, compile_seconds = _initialise_and_compile(config, agent, length, total)
    state = _RunState(carries, _seed_logs(config, resumed_from), started=start, sharding=sharding)
    checkpointer = _checkpointer(config, state, resumed_from, total)
    stop = _train(config, agent, state, chunk, checkpointer, length, total)
    return _summarise(config, agent, state, compile_seconds, stop)


def _initialise_and_compile(config: AnakinConfig, agent: AnakinAgent, length: int, total: int):
    """Every seed's initial carry, laid out over the devices (`seed_sharding`), and the compiled chunk of `length`
    iterations: returns (sharding, carries, chunk, the seconds both took)."""
    compile_start = time.time()
    sharding = seed_sharding(len(config.seeds))
    keys = place_seeds(jnp.stack([jax.random.PRNGKey(seed) for seed in config.seeds]), sharding)
    init, chunk = compile_programs(agent, length, total, keys, sharding)
    carries = place_seeds(init(keys), sharding)
    return sharding, carries, chunk, time.time() - compile_start


def _seed_logs(config: AnakinConfig, resumed_from: Optional[str]) -> List[_SeedLog]:
    """One `_SeedLog` per seed; resuming, each seed's CSV logs are first cut back to the checkpoint."""
    resumed_at = _resume_logs(config, resumed_from) if resumed_from is not None else None
    target_return = config.resolved_target_return
    return [
        _SeedLog(seed, _seed_dir(config, seed), ReturnTracker(config.return_window, target_return), config.tensorboard,
                 resumed_at=None if resumed_at is None else resumed_at.get(seed, {}))
        for seed in config.seeds
    ]


def _checkpointer(config: AnakinConfig, state: "_RunState", resumed_from: Optional[str],
                  total: int) -> Optional[Checkpointer]:
    """The run's checkpointer (None if it keeps no checkpoints); resuming, `state` is restored from
    `resumed_from` first."""
    if config.checkpoint_every_minutes is None and not config.resume:
        return None
    checkpointer = Checkpointer(
        os.path.join(config.run_dir, CHECKPOINTS), {"carries": state, "progress": _Progress(state)},
        metadata=_identity(config), every_minutes=config.checkpoint_every_minutes or float("inf"),
    )
    if resumed_from is not None:
        checkpointer.restore(resumed_from)
        print(f"[anakin {config.agent} {config.environment}] resumed from {resumed_from}: iterations "
              f"{state.iterations}/{total}", flush=True)
    return checkpointer


def _train(config: AnakinConfig, agent: AnakinAgent, state: "_RunState", chunk, checkpointer: Optional[Checkpointer],
           length: int, total: int) -> StopRequests:
    """Calls `chunk` until `total` iterations are done, a signal stops the run or every seed reaches
    `stop_at_average_return`; logs each call's outputs, checkpoints when due and prints progress. Returns the
    run's `StopRequests` (whether, and by which signal, it was stopped)."""
    logs = state.logs
    last_print, target = time.time(), config.stop_at_average_return

    def save_checkpoint(due_only: bool):
        if checkpointer is not None and (checkpointer.due() or not due_only):
            sizes = {str(log.seed): log_sizes(log.directory) for log in logs}
            checkpointer.save(state.iterations * agent.rows_per_iteration, logs=sizes)

    # Ctrl-C / SIGTERM end the run after the jitted call in flight: logs, summaries and curves are still written
    # (and a checkpoint, if the run keeps them). An error (a NaN loss, ...) closes the logs before it propagates, so
    # what was logged reaches the files, TensorBoard's buffered events too.
    with StopRequests() as stop, _closed_on_error(logs):
        while state.iterations < total and not stop.requested:
            active = min(length, total - state.iterations)
            state.carries, outputs = chunk(state.carries, active)
            outputs: IterationOutputs = jax.device_get(outputs)
            state.iterations += active
            for index, log in enumerate(logs):
                log.add(jax.tree_util.tree_map(lambda x: x[index], outputs), agent.loss_keys)
            save_checkpoint(due_only=not stop.requested)
            if config.progress_period_s and time.time() - last_print >= config.progress_period_s:
                last_print = time.time()
                averages = " ".join(f"{log.tracker.average:.1f}" for log in logs)
                print(
                    f"[anakin {config.agent} {config.environment}] iterations {state.iterations}/{total} | steps/seed "
                    f"{logs[0].actor_steps} | return(avg{config.return_window}) per seed: {averages}",
                    flush=True,
                )
            if target is not None and all(log.tracker.is_full and log.tracker.average >= target for log in logs):
                break
    return stop


def _summarise(config: AnakinConfig, agent: AnakinAgent, state: "_RunState", compile_seconds: float,
               stop: StopRequests) -> Dict[str, Any]:
    """Closes the logs and writes each seed's summary and learning curve (and, with several seeds, the combined
    summary); returns the run's summary (`run_anakin`'s)."""
    wall_seconds = time.time() - state.started + state.earlier_wall_seconds
    # The wall seconds mean little without the chip: "cpu: cpu", "gpu: NVIDIA H200", "cpu: cpu x 2" (sharded), ...
    device = f"{jax.default_backend()}: {jax.devices()[0].device_kind}"
    if state.sharding is not None:
        device += f" x {len(state.sharding.device_set)}"
    num_seeds = len(config.seeds)
    summaries = []
    for log in state.logs:
        log.close()
        identity = {"agent": config.agent, "env": config.environment, "seed": log.seed,
                    "config": dataclasses.asdict(config.resolved_agent_config)}
        counts = {"actor_steps": log.actor_steps, "learner_steps": log.learner_steps}
        summary = run_summary(
            identity, log.tracker, counts, wall_seconds,
            launch="anakin", num_envs=agent.num_envs, num_seeds=num_seeds, compile_seconds=round(compile_seconds, 2),
            device=device,
            interrupted=stop.requested, **({"signal": stop.signal_name} if stop.requested else {}),
        )
        summaries.append(summary)
        if log.directory:
            write_summary(log.directory, summary)
            _plot(log.directory, config, log.seed)
    result = summaries[0] if num_seeds == 1 else _combine(config, summaries, wall_seconds, compile_seconds, stop)
    if config.run_dir and num_seeds > 1:
        write_summary(config.run_dir, result)
    return result


CHECKPOINTS = "checkpoints"


class _RunState(Saveable):
    """What a checkpoint holds of a run: every seed's carry (saved as arrays) and, through `_Progress`, the
    iterations done and each seed's log counts."""

    def __init__(self, carries: Any, logs: Sequence[_SeedLog], started: float,
                 sharding: Optional[jax.sharding.Sharding] = None):
        self.carries = carries
        self.sharding = sharding  # where the carries live (`seed_sharding`), restored ones too
        self.logs = logs
        self.iterations = 0
        self.earlier_wall_seconds = 0.0  # the wall seconds of the runs this one resumes
        self.started = started  # this process's start (time.time())

    def save(self) -> Any:
        return self.carries

    def restore(self, state: Any) -> None:
        self.carries = place_seeds(jax.tree_util.tree_map(jnp.asarray, state), self.sharding)


class _Progress(Saveable):
    def __init__(self, state: _RunState):
        self._state = state

    def save(self) -> Dict[str, Any]:
        state = self._state
        return {"iterations": state.iterations,
                "wall_seconds": state.earlier_wall_seconds + time.time() - state.started,
                "seeds": [log.save() for log in state.logs]}

    def restore(self, saved: Dict[str, Any]) -> None:
        self._state.iterations = int(saved["iterations"])
        self._state.earlier_wall_seconds = float(saved["wall_seconds"])
        for log, seed_state in zip(self._state.logs, saved["seeds"]):
            log.restore(seed_state)


def _identity(config: AnakinConfig) -> Dict[str, Any]:
    """What a checkpoint must share with the run that resumes it (the same calls, in the same order)."""
    return {"agent": config.agent, "environment": config.environment, "seeds": list(config.seeds),
            "max_num_actor_steps": config.max_num_actor_steps, "iterations_per_call": config.iterations_per_call,
            "return_window": config.return_window, "agent_config": dataclasses.asdict(config.resolved_agent_config)}


# Before 2026-11-29 an Anakin run kept its settings in <run_dir>/anakin.json, with `environment` for config.json's
# `env`; such a run directory is still read (`read_anakin_config`), and says so.
OLD_ANAKIN_CONFIG = "anakin.json"


def write_anakin_config(config: AnakinConfig) -> None:
    """The run directory as every launch writes it (`launch.lifecycle.run_directory`): `config.json`, the run's
    settings with its resolved agent config, and `run_options.json`, which says the launch is anakin; `python -m
    launch --resume RUN_DIR` reads both back (`read_anakin_config`)."""
    data = {"agent": config.agent, "env": config.environment}
    data.update({field.name: getattr(config, field.name) for field in dataclasses.fields(config)
                 if field.name not in ("agent", "environment", "agent_config", "resume", "run_dir")})
    data.update(seeds=list(config.seeds), agent_config=dataclasses.asdict(config.resolved_agent_config))
    os.makedirs(config.run_dir, exist_ok=True)
    files.write_json(os.path.join(config.run_dir, CONFIG_FILE), data)
    write_run_options(config.run_dir, RunOptions(launch="anakin", tensorboard=config.tensorboard,
                                                 checkpoint_every_minutes=config.checkpoint_every_minutes))


def is_anakin_run(run_dir: str) -> bool:
    """Whether `run_dir` holds an Anakin run: its run_options.json says so (or it has an older run's anakin.json)."""
    if os.path.exists(os.path.join(run_dir, OLD_ANAKIN_CONFIG)):
        return True
    try:
        return read_run_options(run_dir).launch == "anakin"
    except CheckpointError:
        return False  # the resume that follows names what is wrong with the file


def read_anakin_config(run_dir: str, **changes: Any) -> AnakinConfig:
    """The AnakinConfig of the run in `run_dir` (its config.json), set to resume, with `changes` applied;
    CheckpointError naming the file if it is unreadable. An older run's anakin.json is read as it was written, and a
    line on stdout says so."""
    path = os.path.join(run_dir, CONFIG_FILE)
    if not os.path.exists(path) and os.path.exists(os.path.join(run_dir, OLD_ANAKIN_CONFIG)):
        path = os.path.join(run_dir, OLD_ANAKIN_CONFIG)
        print(f"[anakin] {run_dir} was written before Anakin runs kept config.json and run_options.json: reading its "
              f"settings from {path}. The files it has keep their format; a new run directory gets today's.",
              flush=True)
    try:
        with open(path) as f:
            saved = json.load(f)
        saved["environment"] = saved.pop("env") if "env" in saved else saved.pop("environment")
        if "threshold" in saved:  # anakin.json's name for it
            saved["target_return"] = saved.pop("threshold")
        agent_config = make_agent_config(saved["agent"], assignments(saved.pop("agent_config")))
        saved["seeds"] = tuple(saved["seeds"])
        return AnakinConfig(**{**saved, **changes}, agent_config=agent_config, run_dir=run_dir, resume=True)
    except (OSError, json.JSONDecodeError, KeyError, TypeError) as error:
        raise CheckpointError(f"Cannot resume {run_dir}: {path} is missing or unreadable ({error}).") from None


def latest_checkpoint_of(config: AnakinConfig) -> str:
    """The newest checkpoint of `config.run_dir` that reads back whole (`resumable_checkpoint`: newer unreadable
    ones are set aside, and said); CheckpointError saying what to do if there is none."""
    path = resumable_checkpoint(config.run_dir, "anakin")
    if path is None and _finished(config.run_dir):  # a normal end keeps no checkpoint: there is nothing left to run
        raise CheckpointError(
            f"Cannot resume {config.run_dir}: the run finished (its summary.json says so), so there is nothing "
            f"left to train. To train longer, start a new run with a larger --steps "
            f"(another --run-dir, or --overwrite)."
        )
    if path is None:
        raise CheckpointError(
            f"Cannot resume {config.run_dir}: it holds no complete Anakin checkpoint (it is kept with "
            f"--checkpoint-every MINUTES, and when a signal stops the run). Start the run again with --overwrite."
        )
    return path


@contextlib.contextmanager
def _closed_on_error(logs: Sequence[_SeedLog]):
    try:
        yield
    except BaseException:
        for log in logs:
            log.close()
        raise


def _finished(run_dir: str) -> bool:
    """Whether `run_dir` holds the summary of a run that ended at its budget (not stopped by a signal or an error)."""
    try:
        with open(os.path.join(run_dir, "summary.json")) as f:
            summary = json.load(f)
        return summary.get("interrupted") is False and not summary.get("failed")
    except (OSError, json.JSONDecodeError, AttributeError):
        return False


def _resume_logs(config: AnakinConfig, path: str) -> Dict[int, Dict[str, int]]:
    """Cuts every seed's CSV logs back to the checkpoint at `path` (rows written after it belong to the lost part
    of the run); returns each seed's counts (actor_steps, learner_steps) at the checkpoint."""
    metadata = read_metadata(path)
    check_metadata(path, metadata, _identity(config))  # another run's checkpoint: refused before any log is cut
    seeds = {str(seed_state["seed"]): seed_state for seed_state in read_json_state(path, "progress")["seeds"]}
    counts_of = {}
    for seed in config.seeds:
        if str(seed) not in seeds:
            continue
        counts_of[seed] = {key: int(seeds[str(seed)][key]) for key in ("actor_steps", "learner_steps")}
        if str(seed) in metadata.get("logs", {}):
            truncate_logs(_seed_dir(config, seed), metadata["logs"][str(seed)], counts_of[seed])
    return counts_of


def _seed_dir(config: AnakinConfig, seed: int) -> Optional[str]:
    if not config.run_dir:
        return None
    directory = config.run_dir if len(config.seeds) == 1 else os.path.join(config.run_dir, f"seed_{seed}")
    os.makedirs(directory, exist_ok=True)
    return directory


def _combine(config: AnakinConfig, summaries: Sequence[Dict[str, Any]], wall_seconds: float, compile_seconds: float,
             stop: StopRequests):
    averages = [average_return(s) for s in summaries]
    reached = [s["steps_to_threshold"] for s in summaries]
    steps = sum(s["env_steps"] for s in summaries)
    return {
        "agent": config.agent,
        "env": config.environment,
        "launch": "anakin",
        "num_seeds": len(summaries),
        "wall_seconds": round(wall_seconds, 2),
        "compile_seconds": round(compile_seconds, 2),
        "env_steps_all_seeds": steps,
        "steps_per_second_all_seeds": round(steps / wall_seconds, 1),
        f"mean_average_return_last_{config.return_window}": round(float(np.mean(averages)), 2),
        # A multi-agent run's: each agent's, beside the team's (`run_summary`'s average_return_last_<N>/<agent id>).
        **{f"mean_{key}": round(float(np.mean([s[key] for s in summaries])), 2)
           for key in summaries[0] if key.startswith(f"average_return_last_{config.return_window}/")},
        "threshold": summaries[0]["threshold"],
        "seeds_reaching_threshold": sum(steps is not None for steps in reached),
        "failed": False,
        "interrupted": stop.requested,
        **({"signal": stop.signal_name} if stop.requested else {}),
        "seeds": list(summaries),
    }


def _plot(directory: str, config: AnakinConfig, seed: int) -> None:
    plot_run_learning_curve(
        directory,
        actor_labels=["actor"],
        window=config.return_window,
        title=f"{config.agent} on {config.environment} (anakin, seed {seed})",
    )

