"""SAC, MPO, TD3, D4PG and DMPO (MPO with a categorical critic) learn Pendulum-v1 (fixed seeds), single-process;
SAC also as a local_mp program with 2 actors. CI runs SAC and MPO single-process; the others are long tests
(`pytest -m long`).

Each run stops as soon as the last 10 episodes average -250 (a random policy averages about -1200, a policy
that never learns to swing up stays below -700), so CI pays only for the steps learning takes.

CI's SAC and MPO runs use networks of 64 units and batches of 64 (SMALL), cheaper per step than their defaults:
SAC reaches -250 after 9.6k steps (26 s on a loaded 2-core machine; with its defaults 5.8k steps, 72 s idle and
108-243 s loaded), MPO after 10.6k (56 s loaded; with its defaults 6.6k steps, 62 s idle, 133-187 s loaded).
With the policy's learning rate at 1e-12 and the same small networks, no 10-episode average rose above -1,688
(SAC) or -1,111 (MPO) within 20k steps. MPO with its E-step weights replaced by uniform ones (no policy
improvement, default networks) stayed below -1,120 in 12k steps (agents/mpo/README.md). The long tests run each
agent's defaults.
"""

import json

import pytest
from program_launcher import Launcher, last_json_line
from stack import long_test, require

from launch import make_experiment_config, run_single_process  # noqa: E402

TARGET = -250.0
WINDOW = 10


SMALL = ("policy_hidden_sizes=64,64", "critic_hidden_sizes=64,64", "batch_size=64", "samples_per_insert=64")


# TD3 and D4PG take 3-4 minutes each of a loaded 2-core machine: long tests. SAC, in CI, covers the shared
# off-policy continuous path (replay, adder, squashed actions, critic targets).
@pytest.mark.parametrize("agent, budget, overrides", [
    pytest.param("sac", 20_000, SMALL, id="sac"), pytest.param("mpo", 20_000, SMALL, id="mpo"),
    pytest.param("sac", 20_000, (), marks=long_test, id="sac-defaults"),
    pytest.param("mpo", 20_000, (), marks=long_test, id="mpo-defaults"),
    pytest.param("td3", 20_000, (), marks=long_test, id="td3"), pytest.param("d4pg", 30_000, (), marks=long_test, id="d4pg"),
    pytest.param("mpo", 20_000, ("critic_type=categorical",), marks=long_test, id="dmpo"),
])
def test_agent_learns_pendulum(agent, budget, overrides):
    config = make_experiment_config(
        agent=agent,
        config_overrides=overrides,
        environment="Pendulum-v1",
        max_num_actor_steps=budget,
        seed=0,
        stop_at_average_return=TARGET,
        return_window=WINDOW,
        target_return=TARGET,
        progress_period_s=60.0,
        replay="local",  # seeded: the same run every time (see tests/learning/test_agents_learning.py)
    )
    summary = run_single_process(config)
    print(json.dumps(summary))
    assert summary[f"average_return_last_{WINDOW}"] >= TARGET, summary
    assert summary["steps_to_threshold"] is not None and summary["steps_to_threshold"] <= budget, summary
    assert summary["learner_steps"] > 0


@pytest.mark.classic
@long_test  # CI's distributed learning run is local_mp DQN (tests/test_distributed.py)
def test_sac_learns_pendulum_as_a_local_mp_program_with_two_actors(tmp_path):
    require("launchpad")
    budget = 20_000
    launcher = Launcher(
        "--agent", "sac", "--env", "Pendulum-v1", "--launch", "local_mp", "--actors", 2, "--steps", budget,
        "--eval-every", 2_000, "--stop-at-return", TARGET, "--progress-seconds", 60,
        # Across processes a parameter fetch is a copy through the courier: once per learner step is enough.
        "--config", "variable_update_period=8", run_dir=tmp_path / "run", command_line=True,
    )
    assert launcher.wait(timeout=600) == 0, launcher.output[-5000:]
    summary = last_json_line(launcher.output)
    assert summary["launch"] == "local_mp" and summary["average_evaluator_return"] >= TARGET, summary
    assert summary["env_steps"] <= budget + 2_000, summary
    assert launcher.left_behind() == []
