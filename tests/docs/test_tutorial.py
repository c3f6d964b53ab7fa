"""The tutorial's agent (docs/tutorial/my_agent.py, shown in docs/tutorial.md) trains and learns CartPole-v1, and
runs as a distributed program from a script outside the repository (docs/tutorial/run_distributed.py).

The files are run as they are, so the code a reader copies is the code tested. The agent must reach an average of
150 over 20 training episodes within 30k steps. On Reverb, seeds 0-3 reached it after 7.7k-8.9k steps.
The test trains on the seeded local replay (`replay="local"`), the same run every time: 150 after 7,957 steps
(6.6 s at load 2). With a learning rate of 1e-12 the same run ends at 97.7 after 30k steps; a random policy averages
about 22.
"""

import importlib.util
import json
import os
import pathlib
import shutil
import subprocess
import sys

import pytest
from program_launcher import last_json_line
from stack import require

TUTORIAL = pathlib.Path(__file__).resolve().parents[2] / "docs" / "tutorial"
TARGET = 150.0
BUDGET = 30_000


def load_tutorial():
    spec = importlib.util.spec_from_file_location("my_agent", TUTORIAL / "my_agent.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_tutorial_agent_learns_cartpole():
    my_agent = load_tutorial()
    summary = my_agent.train(max_num_actor_steps=BUDGET, seed=0, stop_at_average_return=TARGET)
    assert summary["agent"] == "qlearning" and summary["learner_steps"] > 0, summary
    assert summary["average_return_last_20"] >= TARGET, (
        f"the tutorial's agent averaged {summary['average_return_last_20']} over its last 20 episodes after "
        f"{summary['env_steps']} steps; it should reach {TARGET} (a random policy: about 22): {summary}"
    )


@pytest.mark.classic
def test_the_tutorial_agent_runs_and_resumes_as_a_local_mp_program_from_a_script_of_its_own(tmp_path):
    """The user's script and agent sit outside the repository, unregistered: the node processes import `my_agent`
    as the script does, the run directory records where the agent lives, and the script resumes the run."""
    require("launchpad")
    project = tmp_path / "project"
    project.mkdir()
    for name in ("my_agent.py", "run_distributed.py"):
        shutil.copy(TUTORIAL / name, project / name)
    run_dir = tmp_path / "run"
    small = ["--actors", "1", "--config", "min_replay_size=50", "--config", "hidden_sizes=16"]
    environment = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}

    def script(*arguments):
        result = subprocess.run([sys.executable, str(project / "run_distributed.py"), "--run-dir", str(run_dir),
                                 *small, *arguments], cwd=tmp_path, env=environment, capture_output=True, text=True,
                                timeout=300, check=False)
        assert result.returncode == 0, (result.stdout + result.stderr)[-5000:]
        return last_json_line(result.stdout)

    first = script("--steps", "300")
    assert first["agent"] == "qlearning" and first["launch"] == "local_mp" and first["env_steps"] >= 300, first
    saved = json.loads((run_dir / "config.json").read_text())
    assert saved["agent_reference"] == "my_agent:AGENT", saved
    # The command line will not import the module the run directory names: it says to resume from the script.
    refused = subprocess.run([sys.executable, "-m", "launch", "--resume", str(run_dir)], cwd=tmp_path, env=environment,
                             capture_output=True, text=True, timeout=120, check=False)
    assert refused.returncode == 2 and "my_agent:AGENT" in refused.stderr and "resume=True" in refused.stderr, \
        refused.stderr[-2000:]
    second = script("--steps", "600", "--resume")
    resumed = json.loads((run_dir / "resumed.json").read_text())
    assert resumed["step"] == first["env_steps"], resumed
    assert second["env_steps"] >= 600 and second["learner_steps"] >= resumed["counts"]["learner_steps"], second
