"""Anakin over several devices: with two (CPU) devices the runner splits the seeds over them
(`launch.engines.anakin.seed_sharding`), and the run computes what it computes on one: the same episodes, step for
step and return for return, and the same losses to float32 rounding.

Not bit for bit: each device runs the program compiled for one seed where the one-device run's is compiled for two,
and XLA may order a float32 sum differently for another batch size (measured: the logged means of an update's
metrics differ by at most 1.4e-7 relative, in the last bit; every episode is the same).
"""

import csv
import json
import os
import subprocess
import sys

import numpy as np
from run_helpers import REPO, environment

# One DQN run, seeds 3 and 4, under the registry's smoke config: DQN's form reduces whether to learn across the
# seeds axis (`acmelike.anakin.off_policy.learn_or_wait`), so a sharded run also exercises a cross-device reduction.
_RUN = """
import json, sys
sys.path[:0] = ["tests"]
import jax
from fakes import smoke_overrides
from launch.engines.anakin import AnakinConfig, run_anakin
from launch.experiments.make import make_agent_config

summary = run_anakin(AnakinConfig(
    agent="dqn", environment="gymnax/CartPole-v1", max_num_actor_steps=800, seeds=(3, 4),
    agent_config=make_agent_config("dqn", smoke_overrides("dqn")), run_dir=sys.argv[1], progress_period_s=0,
    iterations_per_call=16))
print(json.dumps({"devices": jax.device_count(), "device": summary["seeds"][0]["device"]}))
"""

_TIMING = ("steps_per_second", "seconds", "walltime", "time")


def _run(run_dir, device_count: int) -> dict:
    env = environment()
    # First: XLA stops reading XLA_FLAGS at a word without "--", as the tests' single-threaded setting ends with one.
    env["XLA_FLAGS"] = f"--xla_force_host_platform_device_count={device_count} {env.get('XLA_FLAGS', '')}".strip()
    env["JAX_PLATFORMS"] = "cpu"
    result = subprocess.run([sys.executable, "-c", _RUN, str(run_dir)], cwd=REPO, env=env, capture_output=True,
                            text=True, timeout=600, check=False)
    assert result.returncode == 0, result.stderr[-5000:]
    found = json.loads(result.stdout.strip().splitlines()[-1])
    logs = {}
    for seed in (3, 4):
        for label in ("actor", "learner"):
            with open(os.path.join(run_dir, f"seed_{seed}", f"{label}.csv")) as f:
                rows = list(csv.DictReader(f))
            logs[seed, label] = [{k: v for k, v in row.items() if not any(t in k for t in _TIMING)} for row in rows]
    return {**found, "logs": logs}


def test_seeds_sharded_over_two_devices_give_the_one_device_numbers(tmp_path):
    one = _run(tmp_path / "one", 1)
    two = _run(tmp_path / "two", 2)
    assert (one["devices"], two["devices"]) == (1, 2)
    assert two["device"].endswith(" x 2") and not one["device"].endswith(" x 2"), (one["device"], two["device"])
    assert all(two["logs"][key] for key in two["logs"]), "a seed logged no episodes or no updates"
    for seed in (3, 4):
        assert one["logs"][seed, "actor"] == two["logs"][seed, "actor"]
        learner_one, learner_two = one["logs"][seed, "learner"], two["logs"][seed, "learner"]
        assert [row.keys() for row in learner_one] == [row.keys() for row in learner_two]
        for row_one, row_two in zip(learner_one, learner_two):
            np.testing.assert_allclose([float(v) for v in row_one.values()], [float(v) for v in row_two.values()],
                                       rtol=1e-5, err_msg=f"seed {seed}: {row_one} vs {row_two}")
