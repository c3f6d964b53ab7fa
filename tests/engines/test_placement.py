"""Placement (`acmelike.placement`) on a CPU with two devices (`--xla_force_host_platform_device_count=2`): the
learner on the first, actors on the last, a policy running where its placed parameters live, and the single-process
runner choosing its policy's device by measuring both. The Ray program's nodes are checked in
tests/engines/test_ray_replay.py (`ray_nodes.json` records each node's device).

Each check runs in a subprocess: XLA reads the device count once, when this process's backend starts.
"""

import os
import subprocess
import sys

from acmelike import xla_threads

TWO_DEVICES = "--xla_force_host_platform_device_count=2"

CHECKS = r"""
import jax, numpy as np
from acmelike import placement
from acmelike.variables import StaticVariableSource
from launch.experiments.make import make_experiment_config
from launch.experiments.parts import AgentParts

devices = jax.devices()
assert [placement.device_name(d) for d in devices] == ["cpu:0", "cpu:1"], devices
plan = placement.plan()
assert (plan.learner, plan.actors, plan.inference) == (devices[0], devices[1], devices[0]), plan
assert [plan.for_group(g) for g in ("learner", "inference", "actor", "evaluator")] == [devices[0], devices[0],
                                                                                       devices[1], devices[1]]
assert placement.process_environment("actor") == {"JAX_PLATFORMS": "cpu"}
assert placement.process_environment("learner") == {"XLA_PYTHON_CLIENT_PREALLOCATE": "false"}

# Parameters placed on the actors' device carry the policy's computation there.
parts = AgentParts(make_experiment_config(agent="dqn", environment="CartPole-v1", max_num_actor_steps=100))
params = jax.device_put(parts.networks.q_network.init(jax.random.PRNGKey(0)), devices[0])
source = placement.PlacedVariableSource(StaticVariableSource({"policy": params}), plan.actors)
(values,) = source.get_variables(["policy"])
assert {d for leaf in jax.tree_util.tree_leaves(values) for d in leaf.devices()} == {devices[1]}
actor = parts.actor(0, variable_source=source, adder=None)
timestep = parts.actor_environment(0).reset()
actor.observe_first(timestep)
action = actor.select_action(timestep.observation)
assert np.asarray(action).shape == (), action
out = jax.jit(lambda p: jax.tree_util.tree_leaves(p)[0].sum())(values)
assert out.devices() == {devices[1]}, out.devices()

# The measured rule: both candidates timed, the faster chosen.
timing = placement.policy_device(parts.policy(), values, parts.spec.observations, 4, (plan.learner, plan.actors),
                                 key=jax.random.PRNGKey(0), calls=10)
assert set(timing.ms_per_step) == {"cpu:0", "cpu:1"}, timing
assert timing.ms_per_step[placement.device_name(timing.device)] == min(timing.ms_per_step.values())
assert placement.policy_device(parts.policy(), values, parts.spec.observations, 1, (plan.learner, plan.learner),
                               key=jax.random.PRNGKey(0)).ms_per_step == {}
print("placement checks passed")
"""


def _two_devices() -> dict:
    # First: XLA stops reading flags at a word that is not one (SINGLE_THREADED ends with such a word).
    flags = os.environ.get("XLA_FLAGS") or xla_threads.SINGLE_THREADED
    return {**os.environ, "XLA_FLAGS": f"{TWO_DEVICES} {flags}"}


def _run(*args, timeout: float = 240) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, *args], env=_two_devices(), capture_output=True, text=True,
                          timeout=timeout, cwd=os.path.dirname(os.path.dirname(os.path.dirname(__file__))))


def test_the_plan_and_placed_parameters_on_two_cpu_devices():
    result = _run("-c", CHECKS)
    assert result.returncode == 0 and "placement checks passed" in result.stdout, result.stderr[-3000:]


def test_the_single_process_runner_measures_where_its_policy_runs(tmp_path):
    result = _run("-m", "launch", "--agent", "dqn", "--env", "CartPole-v1", "--steps", "300", "--config",
                  "min_replay_size=100", "--run-dir", str(tmp_path / "run"))
    assert result.returncode == 0, result.stderr[-3000:]
    (line,) = [line for line in result.stdout.splitlines() if line.startswith("[placement]")]
    assert "cpu:0" in line and "cpu:1" in line and "ms" in line, line


def test_one_device_serves_every_role():
    """With one device (this process's), learner and actors share it, so the runner measures nothing."""
    import jax

    from acmelike import placement

    plan = placement.plan(jax.devices()[:1])
    assert plan.learner == plan.actors == plan.inference == jax.devices()[0]
