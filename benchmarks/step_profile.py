"""Step profile: where each environment step's wall time goes in `run_single_process`, per agent and replay.

For DQN (CartPole-v1), PPO (CartPole-v1, 1 env and `--num-envs 8`) and SAC (Pendulum-v1), the single-process
runner trains for a fixed number of environment steps (no stop at a return) under both replays (`--replay local`
and `--replay reverb`), and under two XLA CPU threading settings: JAX's default (Eigen's thread pool) and single
threaded (`XLA_FLAGS=--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1`). Each variant runs in a
fresh process (XLA_FLAGS must be set before JAX starts), which pays its own compilation. The clock runs from just
before `launch.run_single_process` until it returns, plus the Reverb/TensorFlow import the runner would do inside
it (`import` below); `launch`, JAX and gymnasium are imported before it, as in time_to_solve.

The library is not changed: the worker wraps, from outside, the methods of the objects the runner builds, with
timers that count a part's own time (time in a wrapped part it calls belongs to that part) and move JAX's compile
time out of whichever part triggered it. Compile time is JAX's monitoring events (those `CompileMeter` sums), with
nested events counted once (`CompileClock`; the JSON keeps `CompileMeter`'s sum beside it). The parts:

  env       the environment's `step` and `reset` (gymnasium through the dm_env adapter; batched: one vector step)
  act       the actor's `select_action`: the jitted policy's dispatch and its result
  observe   the actor's `observe`/`observe_first` less the adder's time (its own bookkeeping, extras to numpy)
  insert    the adder's `add`/`add_first` (local: numpy tables; reverb: the TrajectoryWriter's stream)
  fetch     the actor's `update` (the VariableClient: every `variable_update_period` steps it asks the learner
            for its parameters and `device_put`s them)
  sample    `next()` on the learner's dataset (local: the synchronous sample; reverb: a batch out of the
            prefetch thread's queue; the tf.data/Reverb sampling itself runs on that thread, in parallel)
  wait      the runner's poll between steps (`LearningActor._train`, less the learner steps it runs): `ready()`,
            `can_sample`, and with reverb the 0.1 ms sleeps while the prefetch thread delivers a batch the tables
            can already serve. With reverb, `sample` + `wait` is the replay's sampling cost seen by the main thread.
  priority  the learner's priority write-back (`mutate_priorities`; DQN's prioritized replay)
  update    the learner's `step` less `sample` and `priority` (the jitted update's dispatch, the wait for the
            previous call, the host's finishing of it: NaN check, counters, logs), plus the actor's wait for the
            parameters of an update still running: SGDLearner returns as soon as it has dispatched a call, and the
            first `select_action` on parameters fetched after it would wait for its output. The profile waits for
            them just before (the same wait), so that time counts as the update's, not the policy's.
  compile   JAX's tracing, lowering and compilation, wherever it happened
  setup     building the agent's parts, the replay (and the Reverb server), and closing them at the end
  import    importing Reverb and TensorFlow (`acmelike.replay`), which the runner does on first use with either
            replay; timed before the run and added to it, since a user's run (and time_to_solve's clock) pays it
  other     the rest: the environment loop, the runner's loop, counters and loggers, episode bookkeeping

The timers themselves cost about 3 µs per timed call, spread over the parts (`timer_overhead_us_per_env_step` in
the JSON: 20-40 µs per env step at one env, 3 µs at 8).

Each part is reported in microseconds per environment step (the run's wall time over its environment steps)
and as a share of the total, and again for the steady learning phase alone (from the end of the first learner
step, compilation over and the replay past `min_replay_size`, to the end of the loop), which is what each further
step costs; `cpu/wall` is the process's CPU time over its wall time (above 1: threads worked in parallel:
Reverb's, the prefetch thread, XLA's Eigen pool, an update running while the actor steps; below 1: the process did
not get a whole core). Rows (summary.md): per agent, the wall time per environment step with the local replay
against reverb's (whole run, and steady learning), and single-threaded XLA against the default (whole run, local
replay), measured in the same invocation, the order of the runs reversed agent by agent. No goal: these say where
the time goes. Quick mode leaves the single-threaded variants out, and the Reverb variants but DQN's; full mode
runs them all.

    python benchmarks/step_profile.py [--quick] [--agents dqn ppo ppo_8envs sac] [--out DIR]
"""

import argparse
import collections
import contextlib
import dataclasses
import importlib
import json
import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from acmelike import xla_threads  # noqa: E402
from benchmarks.common import CompileMeter, finish, header, print_rows, result_row, write_json  # noqa: E402

XLA_SETTINGS = {"default": None, "single": xla_threads.SINGLE_THREADED}

# agent -> (registered agent, environment, --num-envs)
AGENTS = {
    "dqn": ("dqn", "CartPole-v1", 1),
    "ppo": ("ppo", "CartPole-v1", 1),
    "ppo_8envs": ("ppo", "CartPole-v1", 8),
    "sac": ("sac", "Pendulum-v1", 1),
}
# Environment steps per run: past min_replay_size (DQN, SAC: 1,000) and into steady learning.
STEPS = {
    "quick": {"dqn": 4_000, "ppo": 4_000, "ppo_8envs": 4_000, "sac": 1_300},
    "full": {"dqn": 20_000, "ppo": 25_000, "ppo_8envs": 25_000, "sac": 6_000},
}
COMPONENTS = ("env", "act", "observe", "insert", "fetch", "sample", "wait", "priority", "update", "other", "compile",
              "setup", "import")
FIXED = ("compile", "setup", "import")  # paid once per run, whatever its length


class Profile:
    """Exclusive wall time per named part, with JAX's compile time moved out of the part that triggered it.

    Regions nest (the adder runs inside the actor's `observe`, `next(dataset)` inside the learner's `step`):
    a region's time is its own, less that of the regions it calls and less the compile seconds during it.
    Only the main thread is timed (the prefetch thread's calls are not wrapped).
    """

    def __init__(self, meter):
        self._meter = meter  # anything with a running `seconds` of compile time
        self._stack = []  # [name, start, compile at start, children's wall, children's compile]
        self.seconds = collections.defaultdict(float)
        self.compile_seconds = collections.defaultdict(float)
        self.calls = collections.defaultdict(int)
        # The same after the first learner step (steady learning: past min_replay_size and the update's compile).
        self.learning_since = None
        self.learning_seconds = collections.defaultdict(float)
        self.learning_calls = collections.defaultdict(int)
        self.learning_compile_seconds = 0.0
        self._first_update_done = False
        # A learner step ran since the actor last waited for fresh parameters, and how many fetches its variable
        # client had made by then.
        self.update_pending = False
        self.fetches_at_update = 0
        self.variable_client = None

    def enter(self, name: str) -> None:
        if self._first_update_done and self.learning_since is None and not self._stack:
            # The first part of the environment step after the first learner step: steady learning from here.
            self.learning_since = time.perf_counter()
            self.learning_compile_seconds = -self._meter.seconds
        self._stack.append([name, time.perf_counter(), self._meter.seconds, 0.0, 0.0])

    def exit(self) -> None:
        name, start, compile_start, child_wall, child_compile = self._stack.pop()
        elapsed = time.perf_counter() - start
        compiled = self._meter.seconds - compile_start
        own_compile = compiled - child_compile
        self.seconds[name] += elapsed - child_wall - own_compile
        self.compile_seconds[name] += own_compile
        self.calls[name] += 1
        if self.learning_since is not None:
            self.learning_seconds[name] += elapsed - child_wall - own_compile
            self.learning_calls[name] += 1
        elif name == "update":
            self._first_update_done = True
        if self._stack:
            self._stack[-1][3] += elapsed
            self._stack[-1][4] += compiled

    @contextlib.contextmanager
    def region(self, name: str):
        self.enter(name)
        try:
            yield
        finally:
            self.exit()

    def wrap(self, name: str, function):
        def timed(*args, **kwargs):
            self.enter(name)
            try:
                return function(*args, **kwargs)
            finally:
                self.exit()

        timed.__wrapped__ = function
        return timed

    def wrap_methods(self, obj, names_by_part) -> None:
        """Replaces `obj.method` (an instance attribute, looked up by the callers at call time) by a timed one."""
        for method, part in names_by_part.items():
            if hasattr(obj, method):
                setattr(obj, method, self.wrap(part, getattr(obj, method)))


class TimedIterator:
    """The learner's dataset, with `next()` timed as `sample`; everything else (`ready`, `samples_per_next`,
    `close`) is the wrapped iterator's."""

    def __init__(self, iterator, profile: Profile):
        self._iterator = iterator
        self._profile = profile

    def __iter__(self):
        return self

    def __next__(self):
        with self._profile.region("sample"):
            return next(self._iterator)

    def __getattr__(self, name):
        return getattr(self._iterator, name)


def instrument(profile: Profile) -> None:
    """Wraps the parts `run_single_process` builds (patched on the classes it calls; this process only)."""
    import jax

    from launch.engines import single_process
    from launch.experiments.parts import AgentParts

    def wrapping(method, after):
        def built(self, *args, **kwargs):
            with profile.region(f"setup.{method.__name__}"):
                result = method(self, *args, **kwargs)
            after(result)
            return result

        return built

    def actor_built(actor):
        profile.wrap_methods(actor, {"select_action": "act", "observe": "observe", "observe_first": "observe",
                                     "update": "fetch"})
        select_action, client = actor.select_action, getattr(actor, "_variable_client", None)
        profile.variable_client = client

        def select_action_after_update(observation):
            # The first parameters the actor fetched after a learner step hold that step's output, perhaps still
            # being computed (SGDLearner dispatches and returns): the policy call would wait for them. Waiting here
            # instead, timed as the update's, is the same wait, and leaves `act` the policy's own cost.
            if (profile.update_pending and client is not None and client._params is not None
                    and client.num_fetches > profile.fetches_at_update):
                profile.update_pending = False
                with profile.region("update_wait"):
                    jax.block_until_ready(client._params)
            return select_action(observation)

        actor.select_action = select_action_after_update

    def learner_built(learner):
        step = profile.wrap("update", learner.step)

        def step_then_flag():
            step()
            profile.update_pending = True
            client = profile.variable_client  # the actor is built after the learner
            profile.fetches_at_update = client.num_fetches if client is not None else 0

        learner.step = step_then_flag

    AgentParts.actor_environment = wrapping(
        AgentParts.actor_environment, lambda env: profile.wrap_methods(env, {"step": "env", "reset": "env"})
    )
    AgentParts.actor = wrapping(AgentParts.actor, actor_built)
    AgentParts.adder = wrapping(
        AgentParts.adder, lambda adder: profile.wrap_methods(adder, {"add": "insert", "add_first": "insert"})
    )
    AgentParts.learner = wrapping(AgentParts.learner, learner_built)
    original_init = AgentParts.__init__

    def init(self, *args, **kwargs):
        with profile.region("setup.agent_parts"):
            original_init(self, *args, **kwargs)

    AgentParts.__init__ = init
    single_process.LearningActor._train = profile.wrap("wait", single_process.LearningActor._train)

    for name, make_replay in list(single_process.REPLAYS.items()):

        @contextlib.contextmanager
        def timed_replay(config, parts, lifecycle, _make=make_replay, name=name):
            manager = _make(config, parts, lifecycle)
            with profile.region(f"setup.{name}_replay"):
                replay = manager.__enter__()
            profile.wrap_methods(replay.client, {"mutate_priorities": "priority"})
            try:
                yield dataclasses.replace(replay, dataset=TimedIterator(replay.dataset, profile))
            except BaseException:
                if not manager.__exit__(*sys.exc_info()):
                    raise
            else:
                with profile.region(f"setup.{name}_replay_close"):
                    manager.__exit__(None, None, None)

        single_process.REPLAYS[name] = timed_replay


class CompileClock:
    """Wall seconds JAX spends tracing, lowering and compiling: the union of its compile events' intervals.

    `CompileMeter` sums the events' durations, which counts a nested event twice (tracing a function that calls
    another jitted function reports the inner trace and the outer one, which contains it): PPO's update, for one,
    reads more compile seconds than the call took. Here each event is the interval that ends when it is reported,
    and intervals that overlap count once.
    """

    def __init__(self):
        self.seconds = 0.0
        self.backend_seconds = 0.0
        self._merged = []  # disjoint (start, end) intervals, in order

    def install(self) -> "CompileClock":
        import jax

        jax.monitoring.register_event_duration_secs_listener(self._listener)
        return self

    def _listener(self, event, duration, **_):
        if event not in CompileMeter.EVENTS:
            return
        if event.endswith("backend_compile_duration"):
            self.backend_seconds += duration
        end = time.perf_counter()
        start = end - duration
        while self._merged and self._merged[-1][1] >= start:
            earlier_start, earlier_end = self._merged.pop()
            self.seconds -= earlier_end - earlier_start
            start = min(start, earlier_start)
        self._merged.append((start, end))
        self.seconds += end - start


def timer_overhead_seconds(clock: CompileClock, calls: int = 20_000) -> float:
    """Seconds one timed call adds (a wrapped no-op against the bare one): the profile's own cost, which lands
    in the timed parts."""
    profile = Profile(clock)
    nothing = lambda: None  # noqa: E731
    timed = profile.wrap("x", nothing)
    start = time.perf_counter()
    for _ in range(calls):
        nothing()
    bare = time.perf_counter() - start
    start = time.perf_counter()
    for _ in range(calls):
        timed()
    return max(time.perf_counter() - start - bare, 0.0) / calls


def _per_step(seconds, steps):
    return {part: round(1e6 * value / steps, 2) for part, value in seconds.items()}


def worker(agent: str, replay: str, steps: int, seed: int) -> dict:
    import launch

    # The runner imports Reverb and TensorFlow on first use (both replays build Reverb table objects): timed here,
    # apart, as `import`; time_to_solve's wall time includes it.
    began = time.perf_counter()
    importlib.import_module("acmelike.replay")
    import_seconds = time.perf_counter() - began
    meter = CompileMeter.install()
    clock = CompileClock().install()
    registered, environment, num_envs = AGENTS[agent]
    config = launch.make_experiment_config(
        agent=registered, environment=environment, num_envs=num_envs, max_num_actor_steps=steps, seed=seed,
        replay=replay, progress_period_s=1e9,
    )
    profile = Profile(clock)
    instrument(profile)
    meter.reset()
    compile_at_start = clock.seconds
    backend_at_start = clock.backend_seconds
    start_wall, start_cpu = time.perf_counter(), time.process_time()
    summary = launch.run_single_process(config)
    end = time.perf_counter()
    run_wall, cpu = end - start_wall, time.process_time() - start_cpu
    wall = run_wall + import_seconds
    env_steps = int(summary["env_steps"])
    timed = [part for part in COMPONENTS if part not in ("import", "compile", "setup", "other")]

    setup = {part: value for part, value in profile.seconds.items() if part.startswith("setup.")}
    seconds = {part: profile.seconds.get(part, 0.0) for part in timed}
    seconds["update"] += profile.seconds.get("update_wait", 0.0)
    seconds["import"] = import_seconds
    seconds["setup"] = sum(setup.values())
    seconds["compile"] = clock.seconds - compile_at_start
    seconds["other"] = wall - sum(seconds.values())

    learning = None
    if profile.learning_since is not None and profile.learning_calls["act"]:
        # After the first learner step, to the end of the training loop (the replay's closing left out).
        learning_steps = profile.learning_calls["act"] * num_envs
        parts = {part: profile.learning_seconds.get(part, 0.0) for part in timed}
        parts["update"] += profile.learning_seconds.get("update_wait", 0.0)
        parts["compile"] = profile.learning_compile_seconds + clock.seconds
        learning_wall = end - profile.learning_since - sum(
            value for part, value in profile.learning_seconds.items() if part.startswith("setup.")
        )
        parts["other"] = learning_wall - sum(parts.values())
        learning = {
            "env_steps": learning_steps,
            "wall_seconds": round(learning_wall, 3),
            "us_per_env_step": round(1e6 * learning_wall / learning_steps, 2),
            "us_per_env_step_by_part": _per_step(parts, learning_steps),
        }
    learner_steps = int(summary["learner_steps"])
    learner_seconds = seconds["update"] + seconds["sample"] + seconds["priority"]
    calls = sum(count for part, count in profile.calls.items() if not part.startswith("setup.")) + profile.calls["act"]
    return {
        "agent": agent,
        "replay": replay,
        "xla_flags": os.environ.get("XLA_FLAGS"),
        "seed": seed,
        "env_steps": env_steps,
        "learner_steps": learner_steps,
        "episodes": summary["episodes"],
        "wall_seconds": round(wall, 3),
        "run_single_process_seconds": round(run_wall, 3),
        "cpu_seconds": round(cpu, 3),
        "cpu_per_wall": round(cpu / run_wall, 3),
        "us_per_env_step": round(1e6 * wall / env_steps, 2),
        "seconds": {part: round(value, 4) for part, value in seconds.items()},
        "us_per_env_step_by_part": _per_step(seconds, env_steps),
        "share_by_part": {part: round(value / wall, 4) for part, value in seconds.items()},
        "learning_phase": learning,
        "setup_seconds_by_part": {part[len("setup."):]: round(value, 3) for part, value in setup.items()},
        "compile_seconds_by_part": {
            part: round(value, 3) for part, value in profile.compile_seconds.items() if value >= 5e-4
        },
        "backend_compile_seconds": round(clock.backend_seconds - backend_at_start, 3),
        "compile_meter_seconds": round(meter.seconds, 3),
        "num_compilations": meter.count,
        "calls": {part: count for part, count in profile.calls.items() if not part.startswith("setup.")},
        "update_wait_seconds": round(profile.seconds.get("update_wait", 0.0), 4),
        "timer_overhead_us_per_env_step": round(1e6 * calls * timer_overhead_seconds(clock) / env_steps, 2),
        "learner_ms_per_learner_step": round(1e3 * learner_seconds / learner_steps, 3) if learner_steps else None,
        "average_return_last_window": summary.get(f"average_return_last_{config.return_window}"),
    }


def run_worker(agent: str, replay: str, xla: str, steps: int, seed: int, timeout_s: float = 900) -> dict:
    env = dict(os.environ)
    env.pop("XLA_FLAGS", None)
    if XLA_SETTINGS[xla]:
        env["XLA_FLAGS"] = XLA_SETTINGS[xla]
    command = [sys.executable, os.path.abspath(__file__), "--worker", agent, "--replay", replay,
               "--steps", str(steps), "--seed", str(seed)]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout_s, cwd=ROOT, env=env)
    except subprocess.TimeoutExpired:
        return {"agent": agent, "replay": replay, "xla": xla, "error": f"timed out after {timeout_s:.0f} s"}
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    if done.returncode != 0 or not lines:
        return {"agent": agent, "replay": replay, "xla": xla,
                "error": f"exit code {done.returncode}: {done.stderr.strip()[-2000:]}"}
    return {**json.loads(lines[-1]), "xla": xla}


# Quick mode (`make bench`'s < 15 minutes) profiles every agent on the default replay, and Reverb beside it only
# for the agent whose replay does the most per step (DQN: prioritized, n-step); full mode runs every variant.
QUICK_REVERB_AGENTS = ("dqn",)


def variants(agents, quick: bool):
    """(agent, replay, xla) runs in order: per agent, the replays under the default XLA threading; full mode also
    both replays single-threaded (quick mode leaves those out, and Reverb too but for `QUICK_REVERB_AGENTS`); the
    order alternates agent by agent so drift in the machine's load does not always favour one side."""
    for index, agent in enumerate(agents):
        runs = [(agent, "local", "default")]
        if not quick or agent in QUICK_REVERB_AGENTS:
            runs.append((agent, "reverb", "default"))
        if not quick:
            runs += [(agent, "local", "single"), (agent, "reverb", "single")]
        yield from (runs if index % 2 == 0 else runs[::-1])


def table(runs) -> str:
    """One block per agent, a column pair per run: the whole run's µs per env step (share of its wall time), and
    the steady learning phase's (after the first learner step; fixed costs apart)."""
    lines = []
    for agent in dict.fromkeys(run["agent"] for run in runs):
        mine = [run for run in runs if run["agent"] == agent and "error" not in run]
        if not mine:
            continue
        _, environment, num_envs = AGENTS[agent]
        lines.append(
            f"{agent} on {environment}{f', {num_envs} envs' if num_envs > 1 else ''}, "
            f"{mine[0]['env_steps']:,} env steps: µs per env step, whole run (share) | steady learning"
        )
        lines.append(f"  {'part':<9}" + "".join(f"{run['replay'] + ' / XLA ' + run['xla']:>31}" for run in mine))
        for part in COMPONENTS:
            cells = []
            for run in mine:
                steady = (run["learning_phase"] or {}).get("us_per_env_step_by_part", {}).get(part)
                steady = "-" if steady is None else f"{steady:.0f}"
                cells.append(
                    f"{run['us_per_env_step_by_part'][part]:>9.0f} ({100 * run['share_by_part'][part]:4.1f}%) | "
                    f"{steady:>7}"
                )
            lines.append(f"  {part:<9}" + "".join(f"{cell:>31}" for cell in cells))
        cells = []
        for run in mine:
            steady = (run["learning_phase"] or {}).get("us_per_env_step")
            cells.append(f"{run['us_per_env_step']:>9.0f}         | {'-' if steady is None else f'{steady:.0f}':>7}")
        lines.append(f"  {'total':<9}" + "".join(f"{cell:>31}" for cell in cells))
        for label, value in (
            ("wall s", lambda run: f"{run['wall_seconds']:.1f}"),
            ("fixed s", lambda run: " + ".join(f"{run['seconds'][part]:.1f}" for part in FIXED) + " (c+s+i)"),
            ("cpu/wall", lambda run: f"{run['cpu_per_wall']:.2f}"),
            ("lrn steps", lambda run: f"{run['learner_steps']} x {run['learner_ms_per_learner_step']} ms"),
        ):
            lines.append(f"  {label:<9}" + "".join(f"{value(run):>31}" for run in mine))
        lines.append("")
    return "\n".join(lines)


def make_rows(runs, agents, planned):
    rows = []
    found = {(run["agent"], run["replay"], run["xla"]): run for run in runs if "error" not in run}
    for agent in agents:
        _, environment, num_envs = AGENTS[agent]
        name = f"{agent.upper().replace('_8ENVS', ' 8 envs')} {environment}"
        local, reverb = found.get((agent, "local", "default")), found.get((agent, "reverb", "default"))
        single = found.get((agent, "local", "single"))
        steps = (local or reverb or single or {}).get("env_steps")
        # Rows compare two variants; one whose variants this mode did not plan (quick mode runs Reverb for DQN only
        # and nothing single-threaded) is left out: the per-part split of every run is in the JSON and the table.
        if (agent, "reverb", "default") not in planned:
            continue
        rows.append(result_row(
            f"Step profile, {name} ({steps} env steps): wall per env step, local replay vs reverb",
            local and local["us_per_env_step"], reverb and reverb["us_per_env_step"], "µs/env step", None,
            lower_is_better=True, ours_label="--replay local", baseline_label="--replay reverb",
            note="compile, set-up and imports included; per-part split in step_profile.json",
        ))
        steady = [run and run["learning_phase"] and run["learning_phase"]["us_per_env_step"] for run in (local, reverb)]
        rows.append(result_row(
            f"Step profile, {name}: wall per env step in steady learning, local replay vs reverb",
            steady[0], steady[1], "µs/env step", None, lower_is_better=True, ours_label="--replay local",
            baseline_label="--replay reverb", note="after the first learner step; fixed costs left out",
        ))
        if (agent, "local", "single") not in planned:
            continue
        rows.append(result_row(
            f"Step profile, {name}: wall per env step, single-threaded XLA vs default (local replay)",
            single and single["us_per_env_step"], local and local["us_per_env_step"], "µs/env step", None,
            lower_is_better=True, ours_label="XLA single-threaded", baseline_label="XLA default threads",
        ))
    return rows


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--agents", nargs="*", default=list(AGENTS), choices=list(AGENTS))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default=None)
    parser.add_argument("--worker", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--replay", default="local", help=argparse.SUPPRESS)
    parser.add_argument("--steps", type=int, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        print("\n" + json.dumps(worker(args.worker, args.replay, args.steps, args.seed)), flush=True)
        return

    mode = "quick" if args.quick else "full"
    payload = header("step_profile", quick=args.quick, seeds=[args.seed])
    runs = []
    for agent, replay, xla in variants(args.agents, args.quick):
        began = time.perf_counter()
        run = run_worker(agent, replay, xla, STEPS[mode][agent], args.seed)
        runs.append(run)
        brief = run["error"][-300:] if "error" in run else (
            f"{run['us_per_env_step']:.0f} µs/env step, wall {run['wall_seconds']:.1f} s "
            f"(compile {run['seconds']['compile']:.1f} s)"
        )
        print(f"  {agent} {replay} xla={xla}: {brief} [{time.perf_counter() - began:.0f} s with imports]", flush=True)
    print()
    print(table(runs))
    rows = make_rows(runs, args.agents, set(variants(args.agents, args.quick)))
    payload.update(
        steps=STEPS[mode],
        xla_settings=XLA_SETTINGS,
        components=list(COMPONENTS),
        runs=runs,
        table=table(runs),
        rows=rows,
    )
    path = write_json("step_profile", finish(payload), *([args.out] if args.out else []))
    print_rows(rows)
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
