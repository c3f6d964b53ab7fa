"""The tutorial's agent (docs/tutorial/my_agent.py, shown in docs/tutorial.md) trains and learns CartPole-v1.

The file is run as it is, so the code a reader copies is the code tested. The agent must reach an average of 150
over 20 training episodes within 30k steps. On Reverb, 12 runs reached it after 6.9k-9.6k steps (25-50 s here).
The test trains on the seeded local replay (`replay="local"`), the same run every time: 150 after 7,366 steps
(11.5 s). With a learning rate of 1e-12 the same run ends at 97.7 after 30k steps; a random policy averages
about 22.
"""

import importlib.util
import pathlib

TUTORIAL = pathlib.Path(__file__).resolve().parents[2] / "docs" / "tutorial" / "my_agent.py"
TARGET = 150.0
BUDGET = 30_000


def load_tutorial():
    spec = importlib.util.spec_from_file_location("my_agent", TUTORIAL)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_tutorial_agent_learns_cartpole():
    my_agent = load_tutorial()
    summary = my_agent.train(max_num_actor_steps=BUDGET, seed=0, stop_at_average_return=TARGET, replay="local")
    assert summary["agent"] == "qlearning" and summary["learner_steps"] > 0, summary
    assert summary["average_return_last_20"] >= TARGET, (
        f"the tutorial's agent averaged {summary['average_return_last_20']} over its last 20 episodes after "
        f"{summary['env_steps']} steps; it should reach {TARGET} (a random policy: about 22): {summary}"
    )
