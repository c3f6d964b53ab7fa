"""Distributed programs on Launchpad: the same builder, node graph, learning, failures and clean shutdown."""

import json
import os
import signal
import time

import pytest
from program_launcher import Launcher, line_after
from stack import long_test, require

pytestmark = pytest.mark.classic
require("launchpad")

def test_node_graph_lists_nodes_groups_and_handles(tmp_path):
    from launch import describe_program, make_distributed_program, make_experiment_config

    config = make_experiment_config(
        agent="dqn", environment="CartPole-v1", max_num_actor_steps=10, run_dir=str(tmp_path), evaluation_every=1000
    )
    program = make_distributed_program(config, num_actors=3)
    assert sorted(program.groups) == ["actor", "counter", "evaluator", "learner", "replay", "steps_limiter"]
    assert len(program.groups["actor"]) == 3
    text = describe_program(program)
    assert "actor (3 nodes):" in text
    assert "actor_2        CourierNode  receives: replay, learner, counter" in text
    assert "learner        CourierNode  receives: replay, counter" in text
    assert "replay         ReverbNode   receives: nothing" in text
    assert "steps_limiter  CourierNode  receives: counter, learner" in text
    with pytest.raises(ValueError, match="num_actors must be >= 1"):
        make_distributed_program(config, num_actors=0)
    # --eval-every 0: no evaluator node at all.
    no_evaluation = make_experiment_config(agent="dqn", environment="CartPole-v1", max_num_actor_steps=10, run_dir=str(tmp_path))
    assert "evaluator" not in make_distributed_program(no_evaluation, num_actors=1).groups


def test_same_config_runs_single_process_then_distributed_to_its_budget(tmp_path):
    # Every registered agent also runs both ways on fakes (tests/test_registry.py); this one on a real environment.
    # 4000 steps, not 2000: at load 5-9, 2000 steps ended before the learner's first (jitted) step in 2 of 4 runs.
    launcher = Launcher("same-config", "--agent", "ppo", "--launch", "local_mt", "--steps", 4000, run_dir=tmp_path)
    assert launcher.wait(timeout=300) == 0, launcher.output[-5000:]
    single = json.loads(line_after(launcher.output, "SINGLE "))
    distributed = json.loads(line_after(launcher.output, "DISTRIBUTED "))
    assert single["env_steps"] >= 4000 and distributed["env_steps"] >= 4000
    assert distributed["learner_steps"] > 0 and distributed["launch"] == "local_mt"
    assert distributed["interrupted"] is False  # the steps limiter ended it: lp.stop()'s SIGTERM is no interruption
    assert launcher.left_behind() == []


# The distributed learning run CI pays for. 250 is far above what a program whose actors never see the learner's
# parameters reaches (an untrained greedy DQN ends CartPole episodes in 8-10 steps; random play averages 22), and
# stopping there rather than at 400 halves the run.
TARGET = 250


def test_local_mp_dqn_learns_cartpole_by_the_evaluator(tmp_path):
    budget = 100_000
    launcher = Launcher(
        "learn", "--launch", "local_mp", "--actors", 2, "--steps", budget, "--eval-every", 5_000,
        "--stop-at-return", TARGET, run_dir=tmp_path,
    )
    assert launcher.wait(timeout=600) == 0, launcher.output[-5000:]
    summary = json.loads(line_after(launcher.output, "DISTRIBUTED "))
    assert summary["average_evaluator_return"] >= TARGET, summary
    assert summary["interrupted"] is False  # the evaluator ended it at the target return
    assert summary["env_steps"] <= budget + 2_000, summary
    assert (tmp_path / "learning_curve.png").stat().st_size > 1000
    assert os.path.exists(tmp_path / "logs"), "local_mp sends each node's output to <run_dir>/logs"
    assert launcher.descendants, "local_mp should have started node processes"
    assert launcher.left_behind() == []


@pytest.mark.parametrize("launch", ["local_mt", "local_mp"])
def test_failing_node_stops_program_names_node_and_leaves_nothing(launch, tmp_path):
    launcher = Launcher("fail", "--launch", launch, "--steps", 1_000_000, run_dir=tmp_path)
    launcher.wait_for_progress(timeout=120)
    started = time.time()
    assert launcher.wait(timeout=90) == 1, launcher.output[-5000:]
    failure = line_after(launcher.output, "FAILED ")
    assert "actor_0" in failure, launcher.output[-5000:]
    assert "injected failure after 300 steps" in launcher.output
    assert time.time() - started < 60, "the program should stop within seconds of the failure"
    assert (tmp_path / "failures" / "actor_0.txt").exists()
    with open(tmp_path / "summary.json") as f:  # the summary is still written, naming the failed node
        assert [failure["name"] for failure in json.load(f)["failures"]] == ["actor_0"]
    assert launcher.left_behind() == []


# Ctrl-C to the whole process group, as a terminal sends it, is tests/test_interrupts.py's; SIGINT to the launcher
# alone takes the same path as SIGTERM (a long test).
@pytest.mark.parametrize("signal_number", [signal.SIGTERM, pytest.param(signal.SIGINT, marks=long_test)],
                         ids=["SIGTERM", "SIGINT"])
def test_signal_to_launcher_ends_every_node(signal_number, tmp_path):
    launcher = Launcher("learn", "--launch", "local_mp", "--steps", 1_000_000, run_dir=tmp_path)
    launcher.wait_for_progress(timeout=120)
    launcher._record()
    assert launcher.descendants
    launcher.process.send_signal(signal_number)
    launcher.wait(timeout=60)
    assert launcher.left_behind() == []
