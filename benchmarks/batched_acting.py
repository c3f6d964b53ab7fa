"""Batched acting (issue 11): what stepping B environments together buys, measured against B = 1 in the same run.

1. Replay write cost per environment step: the agents' adders (n-step transitions as DQN writes them; PPO's
   sequences) fed synthetic CartPole-shaped steps into an in-process Reverb server, unbatched (one `append` per
   step) vs `BatchedAdder` with B = 8 (one write per 8 items). Reported in microseconds per environment step.
2. DQN environment steps per second, single process, learner running (default config, so the learner does its
   16 samples per inserted item on both sides), with `--num-envs 8` vs `--num-envs 1`. Each run is a fresh process,
   alternating sides; ratios are medians of the per-round ratios. Two rates per run: steady (env steps/s after the
   first WARMUP_STEPS, timed at the environment: imports, set-up and compilation excluded), which the goal (>= 3x)
   is judged on, and overall (env steps / wall seconds of the whole run, start-up included), informative.
3. MuZero acting with search (Gumbel MuZero, `mctx`, 16 simulations per step, default config, initial parameters):
   CartPole-v1 env steps/s of a `GenericActor` in an `EnvironmentLoop` with B = 1, 4, 16 environments, of
   central inference (an in-process `InferenceServer` serving 4 single-environment actors, each in its own thread,
   in batches of up to 4), and of the bare jitted search (`agents.muzero.acting.search_policy` on B fixed
   observations, its action fetched each call) at the same B. One process, all sides interleaved per round, no
   learner, no replay; ratios are medians of the per-round ratios: B envs vs 1 (what batching buys), the actor vs
   its search alone (what the actor shell and the environment cost over the search), central vs B = 1.

    python benchmarks/batched_acting.py [--quick] [--parts adder dqn muzero] [--out DIR]
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from benchmarks.common import finish, header, print_rows, result_row, write_json  # noqa: E402

NUM_ENVS = 8
THROUGHPUT_GOAL = 3.0
WARMUP_STEPS = 3_000  # the steady rate starts after these env steps (past DQN's min_replay_size of 1000)
SEARCH_NUM_ENVS = (1, 4, 16)
CENTRAL_ACTORS = 4
PARTS = ("adder", "dqn", "muzero")
QUICK_PARTS = ("dqn",)


def _adder_cost(kind: str, num_envs: int, vector_steps: int) -> float:
    """Microseconds of adder work per environment step (`num_envs` 0: the unbatched adder)."""
    import dm_env
    import numpy as np
    import reverb
    from dm_env import specs

    from acmelike import replay  # noqa: F401  (JAX before TensorFlow)
    from acmelike.adders import EndBehavior, NStepTransitionAdder, SequenceAdder
    from acmelike.adders.batched import BatchedAdder, batched_tables
    from acmelike.specs import EnvironmentSpec

    spec = EnvironmentSpec(
        observations=specs.Array((4,), np.float32),
        actions=specs.Array((), np.int32),
        rewards=specs.Array((), np.float32),
        discounts=specs.BoundedArray((), np.float32, 0.0, 1.0),
    )
    if kind == "n_step":
        extras = {}
        signature = NStepTransitionAdder.signature(spec)

        def make(client):
            return NStepTransitionAdder(client=client, table_names="t", n_step=3, discount=0.99)

    else:
        extras = {"log_prob": np.float32(0.0)}
        signature = SequenceAdder.signature(spec, {"log_prob": specs.Array((), np.float32)}, sequence_length=33)

        def make(client):
            return SequenceAdder(
                client=client, table_names="t", sequence_length=33, period=32, end_of_episode_behavior=EndBehavior.CONTINUE
            )

    table = reverb.Table(
        name="t", sampler=reverb.selectors.Fifo(), remover=reverb.selectors.Fifo(), max_size=10**6,
        rate_limiter=reverb.rate_limiters.MinSize(1), signature=signature,
    )
    batch = max(num_envs, 1)
    server = reverb.Server(batched_tables([table], batch) if num_envs else [table], port=None)
    client = reverb.Client(f"localhost:{server.port}")
    rng = np.random.default_rng(0)
    episode_length = 100  # CartPole-like episodes, ended by termination
    try:
        if num_envs:
            adder = BatchedAdder(client=client, num_envs=num_envs, make_adder=make)
            first = dm_env.TimeStep(
                step_type=np.zeros(batch, np.int8), reward=np.zeros(batch, np.float32),
                discount=np.ones(batch, np.float32), observation=rng.standard_normal((batch, 4)).astype(np.float32),
            )
            batched_extras = {k: np.zeros(batch, np.float32) for k in extras}
            # Sub-environment i's episode ends at steps offset by i (they drift apart, as real ones do).
            offsets = np.arange(batch) * 7
            timesteps = []
            for t in range(1, episode_length + 2):
                phase = (t + offsets) % (episode_length + 1)
                step_type = np.where(phase == 0, 0, np.where(phase == episode_length, 2, 1)).astype(np.int8)
                timesteps.append(
                    dm_env.TimeStep(
                        step_type=step_type, reward=np.ones(batch, np.float32),
                        discount=np.where(step_type == 2, 0.0, 1.0).astype(np.float32),
                        observation=rng.standard_normal((batch, 4)).astype(np.float32),
                    )
                )
            actions = np.zeros(batch, np.int32)
            adder.add_first(first)
            start = time.perf_counter()
            for step in range(vector_steps):
                adder.add(actions, timesteps[step % len(timesteps)], batched_extras)
            elapsed = time.perf_counter() - start
            adder.close()
            return elapsed / (vector_steps * batch) * 1e6
        adder = make(client)
        observations = rng.standard_normal((episode_length + 1, 4)).astype(np.float32)
        start = time.perf_counter()
        steps = 0
        while steps < vector_steps:
            adder.add_first(dm_env.restart(observations[0]))
            for t in range(1, episode_length + 1):
                timestep = (
                    dm_env.termination(np.float32(1.0), observations[t]) if t == episode_length
                    else dm_env.transition(np.float32(1.0), observations[t], np.float32(1.0))
                )
                adder.add(np.int32(0), timestep, extras or ())
            steps += episode_length
        elapsed = time.perf_counter() - start
        adder.close()
        return elapsed / steps * 1e6
    finally:
        server.stop()


class _StepClock:
    """Counts environment steps and times them: `steady_rate()` is env steps/s after the first `warmup` steps, once
    imports, replay set-up, the actor's and the learner's compilation (at `min_replay_size`) are behind."""

    def __init__(self, warmup: int):
        self._warmup, self.steps, self._start, self._start_steps, self._last = warmup, 0, None, 0, None

    def tick(self, steps: int) -> None:
        self.steps += steps
        self._last = time.perf_counter()
        if self._start is None and self.steps >= self._warmup:
            self._start, self._start_steps = self._last, self.steps

    def steady_rate(self):
        if self._start is None or self._last <= self._start:
            return None
        return (self.steps - self._start_steps) / (self._last - self._start)


class _Clocked:
    """An environment (single or batched) whose steps tick `clock`."""

    def __init__(self, environment, clock: _StepClock):
        self._environment, self._clock = environment, clock

    def step(self, action):
        timestep = self._environment.step(action)
        self._clock.tick(int(np.size(timestep.step_type)))
        return timestep

    def __getattr__(self, name):
        return getattr(self._environment, name)


def _throughput_worker(agent: str, num_envs: int, steps: int) -> dict:
    import dataclasses

    import launch

    config = launch.make_experiment_config(
        agent=agent, environment="CartPole-v1", max_num_actor_steps=steps, seed=0, progress_period_s=1e9,
        num_envs=num_envs,
    )
    clock = _StepClock(warmup=WARMUP_STEPS)
    single, vector = config.environment_factory, config.vector_environment_factory
    config = dataclasses.replace(
        config,
        environment_factory=lambda seed: _Clocked(single(seed), clock),
        vector_environment_factory=lambda num_envs, seed: _Clocked(vector(num_envs=num_envs, seed=seed), clock),
    )
    start = time.perf_counter()
    summary = launch.run_single_process(config)
    wall = time.perf_counter() - start
    steady = clock.steady_rate()
    return {
        "agent": agent, "num_envs": num_envs, "env_steps": summary["env_steps"], "wall_seconds": round(wall, 2),
        "steps_per_second": round(summary["env_steps"] / wall, 1),
        "steady_steps_per_second": round(steady, 1) if steady else None, "learner_steps": summary["learner_steps"],
        "average_return_last_20": summary["average_return_last_20"],
    }


def _search_worker(vector_steps: int, repeats: int) -> dict:
    """Part 3: MuZero's actor, central inference and bare search, interleaved in this process (see the docstring).

    Every side is built and compiled once, then runs `repeats` rounds of about `vector_steps` batched calls each
    (central: per actor thread); rates are env steps (search: observations) per second."""
    import threading

    import jax

    import launch  # noqa: F401  (orders the JAX/TensorFlow imports)
    from acmelike.actors import make_policy_actor
    from acmelike.actors.inference import InferenceClientActor, InferenceServer
    from acmelike.loggers import NoOpLogger
    from acmelike.specs import make_environment_spec
    from acmelike.variables import StaticVariableSource, VariableClient
    from acmelike.wrappers import make_gymnasium_environment, make_vector_environment
    from agents.muzero import MuZeroBuilder, MuZeroConfig, make_networks
    from agents.muzero.acting import search_options, search_policy
    from environment_loops import EnvironmentLoop

    config = MuZeroConfig()
    spec = make_environment_spec(make_gymnasium_environment("CartPole-v1", seed=0))
    networks = make_networks(spec, config)
    params = networks.init(jax.random.PRNGKey(0))
    policy = MuZeroBuilder(config).make_policy(networks=networks, environment_spec=spec)
    source = StaticVariableSource({"policy": params})

    def acting(actor, num_envs, seed):
        """A run of the loop until `vector_steps * num_envs` steps of finished episodes; returns the env steps it
        took, counted at the environment (episodes still running at the end count too)."""
        clock = _StepClock(warmup=0)
        env = _Clocked(make_vector_environment("CartPole-v1", num_envs, seed), clock)
        loop = EnvironmentLoop(env, actor, logger=NoOpLogger())

        def run():
            before = clock.steps
            loop.run(num_steps=vector_steps * num_envs)
            return clock.steps - before

        return run

    def bare_search(num_envs):
        search = jax.jit(lambda key, observations: search_policy(
            networks, params, key, observations, **search_options(config)).action)
        observations = np.asarray(make_vector_environment("CartPole-v1", num_envs, 0).reset().observation)

        def run():
            for key in jax.random.split(jax.random.PRNGKey(1), vector_steps):
                np.asarray(search(key, observations))  # an acting loop needs each action before the next step
            return vector_steps * num_envs

        return run

    server = InferenceServer(policy, VariableClient(source, "policy"), max_batch_size=CENTRAL_ACTORS, timeout_s=0.002)
    central_runs = [
        acting(InferenceClientActor(server, i, jax.random.PRNGKey(i), num_envs=1), 1, i) for i in range(CENTRAL_ACTORS)
    ]

    def central():
        counts = [0] * CENTRAL_ACTORS

        def actor_thread(i):
            counts[i] = central_runs[i]()

        threads = [threading.Thread(target=actor_thread, args=(i,)) for i in range(CENTRAL_ACTORS)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        return sum(counts)

    sides = {}
    for b in SEARCH_NUM_ENVS:
        actor = make_policy_actor(policy, random_key=jax.random.PRNGKey(0), num_envs=b, variable_source=source,
                                  adder=None, variable_update_period=1)
        sides[f"actor_{b}"] = acting(actor, b, 0)
        sides[f"search_{b}"] = bare_search(b)
    sides["central"] = central
    server.start()
    try:
        compile_seconds = {}
        for name, run in sides.items():  # the first run of each side compiles its jitted step
            start = time.perf_counter()
            run()
            compile_seconds[name] = round(time.perf_counter() - start, 2)
        rates = {name: [] for name in sides}
        for i in range(repeats):
            names = list(sides) if i % 2 == 0 else list(reversed(sides))  # drift in load hits every side alike
            for name in names:
                start = time.perf_counter()
                count = sides[name]()
                rates[name].append(count / (time.perf_counter() - start))
    finally:
        server.stop()
    return {
        "vector_steps_per_run": vector_steps, "repeats": repeats, "first_run_seconds": compile_seconds,
        "central_batch_sizes": {str(n): server.batch_sizes.count(n) for n in sorted(set(server.batch_sizes))},
        "rates": {name: [round(r, 1) for r in values] for name, values in rates.items()},
        "device": str(jax.devices()[0]),
    }


def _run_worker(*args) -> dict:
    command = [sys.executable, os.path.abspath(__file__), "--worker", *map(str, args)]
    done = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, timeout=1800)
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    if done.returncode != 0 or not lines:
        return {"error": f"exit code {done.returncode}: {done.stderr.strip()[-1500:]}"}
    return json.loads(lines[-1])


def _search_rows(rates: dict) -> list:
    """Part 3's rows from its per-round rates: each ratio is the median of the per-round ratios."""

    def row(benchmark, ours, baseline, ours_label, baseline_label, unit, note):
        return result_row(
            benchmark, statistics.median(rates[ours]), statistics.median(rates[baseline]), unit, None,
            ratio=statistics.median(o / b for o, b in zip(rates[ours], rates[baseline])),
            ours_label=ours_label, baseline_label=baseline_label, note=note,
        )

    search = "Gumbel MuZero search, 16 simulations, CartPole-v1, no learner"
    rows = [
        row(f"MuZero actor env steps/s, {b} envs vs 1", f"actor_{b}", "actor_1", f"GenericActor B={b}",
            "GenericActor B=1", "env steps/s", f"{search}; informative")
        for b in SEARCH_NUM_ENVS[1:]
    ]
    rows += [
        row(f"MuZero actor vs its search alone, B={b}", f"actor_{b}", f"search_{b}", f"GenericActor B={b} + env",
            f"bare jitted search_policy [{b}]", "steps/s", f"{search}; the ratio is the actor shell's and the "
            "environment's cost over the search")
        for b in SEARCH_NUM_ENVS
    ]
    rows.append(row(
        f"MuZero central inference, {CENTRAL_ACTORS} single-env actors vs one local actor", "central", "actor_1",
        f"InferenceServer, {CENTRAL_ACTORS} actor threads", "GenericActor B=1", "env steps/s",
        f"{search}; in-process server (2 ms batching timeout), actors are threads, not Launchpad processes"))
    return rows


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--out", default=None)
    # Quick mode (make bench's < 15 minutes) runs the part with a goal: the adder costs (8 fresh processes, ~50 s)
    # and MuZero's search acting (~75 s) are informative, run in full mode or when named.
    parser.add_argument("--parts", nargs="+", choices=PARTS, default=None,
                        help="which measurements to run (default: all; quick mode: dqn only)")
    parser.add_argument("--worker", nargs="*", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.parts is None:
        args.parts = list(QUICK_PARTS if args.quick else PARTS)
    if args.worker:
        kind = args.worker[0]
        if kind == "adder":
            cost = _adder_cost(args.worker[1], int(args.worker[2]), int(args.worker[3]))
            print("\n" + json.dumps({"us_per_env_step": cost}), flush=True)
        elif kind == "search":
            print("\n" + json.dumps(_search_worker(int(args.worker[1]), int(args.worker[2]))), flush=True)
        else:
            print("\n" + json.dumps(_throughput_worker(kind, int(args.worker[1]), int(args.worker[2]))), flush=True)
        return

    payload = header("batched_acting", quick=args.quick, seeds=[0])
    rows = []
    costs, runs = {}, {1: [], NUM_ENVS: []}
    # 1. Replay write cost per environment step.
    if "adder" in args.parts:
        vector_steps = 2_000 if args.quick else 10_000
        for kind, label in (("n_step", "n-step transitions (DQN)"), ("sequence", "sequences of 33 (PPO)")):
            rounds = []
            for _ in range(3 if args.quick else 5):
                unbatched = _run_worker("adder", kind, 0, vector_steps * NUM_ENVS)
                batched = _run_worker("adder", kind, NUM_ENVS, vector_steps)
                rounds.append((unbatched.get("us_per_env_step"), batched.get("us_per_env_step")))
            rounds = [r for r in rounds if None not in r]
            unbatched_us = statistics.median(u for u, _ in rounds) if rounds else None
            batched_us = statistics.median(b for _, b in rounds) if rounds else None
            costs[kind] = {"unbatched_us": unbatched_us, "batched_us": batched_us, "rounds": rounds}
            rows.append(
                result_row(
                    f"Replay write cost per env step, {label}, B={NUM_ENVS} vs unbatched",
                    batched_us, unbatched_us, "us/env step", None, lower_is_better=True,
                    ours_label=f"BatchedAdder B={NUM_ENVS}", baseline_label="the agent's adder, one env",
                    note="adder work only (Python + Reverb writer), synthetic CartPole-shaped steps",
                )
            )
    # 2. DQN env steps/s, learner running, 8 environments vs 1.
    if "dqn" in args.parts:
        steps = 8_000 if args.quick else 40_000  # quick: 5,000 steady steps past WARMUP_STEPS
        for i in range(2 if args.quick else 3):
            for num_envs in ((1, NUM_ENVS) if i % 2 == 0 else (NUM_ENVS, 1)):
                run = _run_worker("dqn", num_envs, steps)
                runs[num_envs].append(run)
                print(f"  dqn num_envs={num_envs}: {run}", flush=True)
        for label, key, goal, what in (
            ("steady", "steady_steps_per_second", THROUGHPUT_GOAL, f"steady (after {WARMUP_STEPS} env steps: start-up and compilation excluded)"),
            ("overall", "steps_per_second", None, "overall (env steps / wall seconds of the run, start-up and compilation included); informative"),
        ):
            pairs = [
                (b[key], u[key]) for b, u in zip(runs[NUM_ENVS], runs[1]) if b.get(key) and u.get(key)
            ]
            ratio = statistics.median(b / u for b, u in pairs) if pairs else None
            rows.append(
                result_row(
                    f"DQN env steps/s, single process, learner running, {NUM_ENVS} envs vs 1, {label}",
                    statistics.median(b for b, _ in pairs) if pairs else None,
                    statistics.median(u for _, u in pairs) if pairs else None,
                    "env steps/s", goal, ratio=ratio,
                    ours_label=f"--num-envs {NUM_ENVS}", baseline_label="--num-envs 1",
                    note=f"{what}; {steps} env steps per run, fresh process each, default DQN config (16 samples per "
                    "inserted item, so the learner's work per env step is the same on both sides)",
                )
            )
    # 3. MuZero acting with search: batched, central and the bare search, in one process.
    search = _run_worker("search", *((100, 3) if args.quick else (400, 5))) if "muzero" in args.parts else {}
    if search.get("error"):
        print(f"  muzero search acting: {search['error']}", flush=True)
    elif search:
        rows += _search_rows(search["rates"])
    payload.update(
        num_envs=NUM_ENVS, parts=args.parts, adder_costs=costs, throughput_runs={str(k): v for k, v in runs.items()},
        muzero_search_acting=search, rows=rows,
    )
    path = write_json("batched_acting", finish(payload), *([args.out] if args.out else []))
    print_rows(rows)
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
