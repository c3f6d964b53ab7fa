"""Multi-agent inference (issue 23): environment steps/s of MPE simple_spread with 3 and 6 agents, 4 actor
threads each stepping its own environment, by where the policy runs:

* **per-agent** (the baseline): one jitted policy call per agent per step, as frameworks that keep a policy per
  agent (RLlib's policy mapping, our `independent_*` agents) do. Each agent's call runs the same MLP IPPO's actor
  has (64-64, tanh, input [its observation, one-hot of its index]), at batch 1.
* **joint (IPPO, local)**: IPPO's actor (`multiagent_categorical_core` in a `GenericActor`): one call per step
  for every agent of the environment.
* **central (IPPO)**: the same policy on one in-process `InferenceServer` (`--inference central`'s server, 2 ms
  batching timeout): one call per batch serves every agent of every actor waiting (up to 4 actors x N agents).

The parameters are fixed (no learner, no replay): what is compared is the cost of acting. Each side runs the
same number of environment steps per repeat; sides alternate repeat by repeat (`common.paired_rates`). On a
2-core machine the four threads share two cores and the GIL, so this is the CPU cost of the designs; the central
server's one call per batch is what an accelerator would take. Lingua Franca reports 5.12x faster multi-agent
inference than Ray's: our central row against the per-agent one is the comparable figure (not the same system).

    python benchmarks/multiagent_inference.py [--quick] [--out DIR]
"""

import argparse
import importlib
import itertools
import os
import sys
import threading

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from benchmarks.common import finish, header, paired_rates, print_rows, result_row, write_json  # noqa: E402

AGENT_COUNTS = (3, 6)
ACTORS = 4
SEED = 0


def make_environment(num_agents: int, seed: int):
    """simple_spread_v3 with `num_agents` agents (and as many landmarks) through the PettingZoo adapter."""
    from acmelike.wrappers.pettingzoo_adapter import PYGAME_LOCK, PettingZooToDmEnv

    module = importlib.import_module("mpe2.simple_spread_v3")
    with PYGAME_LOCK:
        environment = module.parallel_env(N=num_agents)
    return PettingZooToDmEnv(environment, seed=seed, name=f"simple_spread_v3 N={num_agents}")


def per_agent_actor(spec, index: int, key):
    """Agent `index`'s own actor: a categorical policy over an MLP of IPPO's actor's shape and input, called
    once per step for this agent alone."""
    import flax.linen as nn
    import jax
    import jax.numpy as jnp
    import numpy as np

    from acmelike.actors import GenericActor, categorical_policy_core
    from acmelike.networks import MLP
    from acmelike.wrappers.pettingzoo_adapter import agent_ids

    ids = agent_ids(spec)
    one_hot = jnp.eye(len(ids))[index]
    network = MLP((64, 64, spec.actions[ids[index]].num_values), activation=nn.tanh)
    size = int(np.prod(spec.observations[ids[index]].observation.shape))
    params = network.init(jax.random.PRNGKey(index), jnp.zeros((1, size + len(ids))))

    def logits(params, observation):
        inputs = jnp.concatenate([jnp.reshape(observation, (1, -1)), one_hot[None]], -1)
        return network.apply(params, inputs)

    class Fixed:
        def __init__(self):
            self.params = params

        def update(self, wait=False):
            pass

    return GenericActor(categorical_policy_core(logits), key, Fixed())


class PerAgentActors:
    """Every agent's own actor; a dict observation in, a dict of their actions out."""

    def __init__(self, spec, key):
        import jax

        from acmelike.wrappers.pettingzoo_adapter import agent_ids

        self._actors = {agent: per_agent_actor(spec, index, jax.random.fold_in(key, index))
                        for index, agent in enumerate(agent_ids(spec))}

    def select_action(self, observation):
        return {agent: actor.select_action(observation[agent].observation) for agent, actor in self._actors.items()}

    def observe_first(self, timestep):
        for actor in self._actors.values():
            actor.observe_first(timestep)

    def observe(self, action, next_timestep):
        pass


def run_actors(make_actor, num_agents: int, steps_per_actor: int) -> int:
    """`ACTORS` threads, each stepping its own environment `steps_per_actor` times through `make_actor(index)`;
    returns the environment steps taken in all."""
    environments = [make_environment(num_agents, SEED + index) for index in range(ACTORS)]
    actors = [make_actor(index) for index in range(ACTORS)]

    def act(environment, actor):
        timestep = environment.reset()
        actor.observe_first(timestep)
        for _ in range(steps_per_actor):
            action = actor.select_action(timestep.observation)
            timestep = environment.step(action)
            actor.observe(action, timestep)
            if timestep.last():
                timestep = environment.reset()
                actor.observe_first(timestep)

    threads = [threading.Thread(target=act, args=pair) for pair in zip(environments, actors)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for environment in environments:
        environment.close()
    return ACTORS * steps_per_actor


def measure(num_agents: int, steps_per_actor: int, repeats: int) -> dict:
    import jax

    from acmelike.actors import GenericActor
    from acmelike.actors.inference import InferenceClientActor, InferenceServer
    from acmelike.specs import make_environment_spec
    from agents.ippo.builder import multiagent_categorical_core
    from agents.ippo.config import IPPOConfig
    from agents.ippo.networks import make_networks

    probe = make_environment(num_agents, SEED)
    spec = make_environment_spec(probe)
    probe.close()
    networks = make_networks(spec, IPPOConfig())
    policy = multiagent_categorical_core(networks)

    class Fixed:
        params = networks.init(jax.random.PRNGKey(SEED))

        def update(self, wait=False):
            pass

    keys = [jax.random.PRNGKey(SEED + 1 + index) for index in range(ACTORS)]
    actor_ids = itertools.count()
    server = InferenceServer(policy, Fixed(), max_batch_size=ACTORS, timeout_s=0.002)
    server.start()
    try:
        sides = {
            "per_agent": lambda: run_actors(lambda i: PerAgentActors(spec, keys[i]), num_agents, steps_per_actor),
            "joint": lambda: run_actors(lambda i: GenericActor(policy, keys[i], Fixed()), num_agents, steps_per_actor),
            # A new actor id per repeat: each repeat registers its actors afresh, as a new program's would.
            "central": lambda: run_actors(
                lambda i: InferenceClientActor(server, next(actor_ids), keys[i]), num_agents, steps_per_actor),
        }
        for run in sides.values():  # compile every side's calls before timing
            run()
        batch_sizes_before = len(server.batch_sizes)
        central = paired_rates(sides["central"], sides["per_agent"], repeats)
        served = server.batch_sizes[batch_sizes_before:]
        joint = paired_rates(sides["joint"], sides["per_agent"], repeats)
    finally:
        server.stop()
    return {"agents": num_agents, "central_vs_per_agent": central, "joint_vs_per_agent": joint,
            "central_mean_batch_environments": sum(served) / max(len(served), 1),
            "central_mean_batch_agents": num_agents * sum(served) / max(len(served), 1)}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--out", default=None)
    args = parser.parse_args(argv)

    steps, repeats = (150, 2) if args.quick else (1000, 5)
    payload = header("multiagent_inference", quick=args.quick, seeds=[SEED])
    payload.update(env="mpe/simple_spread_v3", actors=ACTORS, steps_per_actor_per_repeat=steps)
    try:
        import mpe2  # noqa: F401
    except ImportError as error:
        reason = f"needs the multiagent extra (pip install -e '.[multiagent]'): {error}"
        print(reason)
        payload.update(available=False, reason=reason, rows=[
            result_row(f"Multi-agent inference, {n} agents", None, None, "env steps/s", None, note=reason)
            for n in AGENT_COUNTS])
    else:
        runs, rows = [], []
        for num_agents in AGENT_COUNTS:
            print(f"  {num_agents} agents, {ACTORS} actor threads, {steps} steps each per repeat ...", flush=True)
            run = measure(num_agents, steps, repeats)
            runs.append(run)
            central, joint = run["central_vs_per_agent"], run["joint_vs_per_agent"]
            rows.append(result_row(
                f"Multi-agent central inference vs per-agent calls, {num_agents} agents x {ACTORS} actors",
                central["ours_per_second"], central["baseline_per_second"], "env steps/s", None,
                ratio=central["ratio"], ours_label="IPPO, --inference central", baseline_label="a call per agent",
                note=f"mean batch {run['central_mean_batch_agents']:.1f} agents; informative (no goal); "
                     "Lingua Franca reports 5.12x over Ray"))
            rows.append(result_row(
                f"Multi-agent joint policy vs per-agent calls, {num_agents} agents x {ACTORS} actors",
                joint["ours_per_second"], joint["baseline_per_second"], "env steps/s", None,
                ratio=joint["ratio"], ours_label="IPPO, local inference", baseline_label="a call per agent",
                note="one call per environment step for all its agents; informative (no goal)"))
        payload.update(available=True, runs=runs, rows=rows)
    path = write_json("multiagent_inference", finish(payload), *([args.out] if args.out else []))
    print_rows(payload["rows"])
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
