"""Runs distributed programs for the tests in a process of their own.

Launchpad's stopper signals the launcher process and may kill it, so tests never launch inside pytest.

    python tests/distributed_script.py same-config --agent dqn --launch local_mt --steps 3000 --run-dir DIR
    python tests/distributed_script.py fail --launch local_mp --steps 100000 --run-dir DIR
    python tests/distributed_script.py smoke --agent ppo --launch local_mt --steps 200 --run-dir DIR
"""

import argparse
import dataclasses
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from acmelike.wrappers import make_gymnasium_environment  # noqa: E402
from launch import DistributedRunError, agent_definition, make_experiment_config, run_distributed, run_single_process  # noqa: E402
from launch.experiments.parts import actor_seed  # noqa: E402

FAILING_INDEX = 0  # actor_0's environment fails


class FailingEnvironment:
    """CartPole that raises after `fail_after` steps: the injected failure."""

    def __init__(self, environment, fail_after: int):
        self._environment = environment
        self._fail_after = fail_after
        self._steps = 0

    def step(self, action):
        self._steps += 1
        if self._steps > self._fail_after:
            raise RuntimeError(f"injected failure after {self._fail_after} steps")
        return self._environment.step(action)

    def __getattr__(self, name):
        return getattr(self._environment, name)


def failing_actor_0_environment(failing_seed: int, seed: int):
    environment = make_gymnasium_environment("CartPole-v1", seed)
    return FailingEnvironment(environment, 300) if seed == failing_seed else environment


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("mode", choices=("same-config", "learn", "fail", "smoke"))
    parser.add_argument("--agent", default="dqn")
    parser.add_argument("--launch", default="local_mt")
    parser.add_argument("--actors", type=int, default=2)
    parser.add_argument("--steps", type=int, default=3000)
    parser.add_argument("--eval-every", type=int, default=0)
    parser.add_argument("--stop-at-return", type=float, default=None)
    parser.add_argument("--inference", default="local")
    parser.add_argument("--run-dir", required=True)
    parser.add_argument("--ray-address", default=None)
    parser.add_argument("--ray-resources", default="")
    args = parser.parse_args()
    factory, overrides = None, ()
    if args.mode == "smoke":
        from fakes import fake_environment_factory, smoke_overrides

        factory = fake_environment_factory(agent_definition(args.agent).action_space)
        overrides = smoke_overrides(args.agent)
    config = make_experiment_config(
        agent=args.agent, environment="fake" if factory else "CartPole-v1", max_num_actor_steps=args.steps, seed=0,
        run_dir=args.run_dir, evaluation_every=args.eval_every, progress_period_s=5.0,
        stop_at_average_return=args.stop_at_return, environment_factory=factory, config_overrides=overrides,
        inference=args.inference,
    )
    if args.mode == "same-config":
        # The one config object, builder included, runs in one process and then as a distributed program (each
        # in its own run directory: a directory holding one run's checkpoints is refused to another).
        single = run_single_process(dataclasses.replace(config, run_dir=os.path.join(args.run_dir, "single")))
        print("SINGLE " + json.dumps(single), flush=True)
    if args.mode == "fail":
        import functools

        failing = functools.partial(failing_actor_0_environment, actor_seed(config, FAILING_INDEX))
        config = dataclasses.replace(config, environment_factory=failing)
    try:
        summary = run_distributed(config, num_actors=args.actors, launch=args.launch, ray_options=_ray(args))
    except DistributedRunError as error:
        print(f"FAILED {error}", flush=True)
        return 1
    print("DISTRIBUTED " + json.dumps(summary), flush=True)
    return 0


def _ray(args):
    if args.launch != "ray":
        return None
    from launch.engines.distributed.ray_engine import RayOptions, parse_resources

    return RayOptions(args.ray_address, parse_resources(args.ray_resources))


if __name__ == "__main__":
    sys.exit(main())
