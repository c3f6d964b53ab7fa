"""Tests of EnvironmentLoop with a fake environment and actor, and once on a real gymnasium environment."""

import numpy as np
import pytest

from acmelike import core
from acmelike.counting import Counter
from acmelike.loggers import InMemoryLogger
from acmelike.wrappers import StepLimitWrapper, make_gymnasium_environment
from environment_loops import EnvironmentLoop
from fakes import FakeActor, FakeEnvironment


class CountingObserver:
    def __init__(self):
        self.first, self.steps, self.actions = 0, 0, []

    def observe_first(self, env, timestep):
        assert timestep.first()
        self.first += 1
        self.steps = 0

    def observe(self, env, timestep, action):
        self.steps += 1
        self.actions.append(action)

    def get_metrics(self):
        return {"observed_steps": self.steps, "observed_episodes": self.first}


def _loop(episode_length=3, **kwargs):
    env, actor = FakeEnvironment(episode_length=episode_length), FakeActor()
    kwargs.setdefault("logger", InMemoryLogger())
    return EnvironmentLoop(env, actor, **kwargs), env, actor


def test_fake_actor_is_an_actor():
    assert isinstance(FakeActor(), core.Actor)


def test_call_order_is_the_core_loop():
    loop, env, actor = _loop(episode_length=3)
    loop.run_episode()
    assert actor.call_names == ["observe_first"] + ["select_action", "observe", "update"] * 3
    # select_action sees each observation; observe gets the action and the next timestep.
    observations = [arg for name, arg in actor.calls if name == "select_action"]
    assert [float(o[0]) for o in observations] == [0.0, 1.0, 2.0]
    observed = [arg for name, arg in actor.calls if name == "observe"]
    assert [timestep.reward for _, timestep in observed] == [1.0, 2.0, 3.0]
    assert observed[-1][1].last() and env.actions == [0, 0, 0]


def test_run_episode_logs_its_result_and_exposes_actor_and_environment():
    logger = InMemoryLogger()
    loop, env, actor = _loop(episode_length=2, logger=logger)
    result = loop.run_episode()
    assert logger.data == [result]
    assert loop.actor is actor and loop.environment is env


def test_should_update_false_skips_update():
    loop, _, actor = _loop(should_update=False)
    loop.run_episode()
    assert "update" not in actor.call_names


def test_run_episode_result_and_counts():
    loop, _, _ = _loop(episode_length=4)
    result = loop.run_episode()
    assert result["episode_return"] == 10.0 and isinstance(result["episode_return"], float)
    assert result["episode_length"] == 4
    assert result["steps_per_second"] > 0
    assert result["episodes"] == 1 and result["steps"] == 4
    result = loop.run_episode()
    assert result["episodes"] == 2 and result["steps"] == 8


def test_prefixed_counter_with_parent():
    root = Counter()
    loop, _, _ = _loop(episode_length=2, counter=Counter(root, prefix="actor", time_delta=0.0))
    result = loop.run_episode()
    assert result["actor_steps"] == 2 and result["actor_episodes"] == 1
    assert root.get_counts() == {"actor_steps": 2, "actor_episodes": 1}


def test_run_num_episodes_logs_each_episode():
    logger = InMemoryLogger()
    loop, env, _ = _loop(episode_length=3, logger=logger)
    assert loop.run(num_episodes=3) == 9
    assert [row["episodes"] for row in logger.data] == [1, 2, 3]
    assert [row["episode_return"] for row in logger.data] == [6.0] * 3
    assert env.num_resets == 3


@pytest.mark.parametrize(
    "num_steps, expected_episodes", [(0, 0), (1, 1), (4, 1), (5, 2), (8, 2), (9, 3)]
)
def test_run_num_steps_finishes_the_episode_that_reaches_it(num_steps, expected_episodes):
    logger = InMemoryLogger()
    loop, _, _ = _loop(episode_length=4, logger=logger)
    assert loop.run(num_steps=num_steps) == 4 * expected_episodes
    assert len(logger.data) == expected_episodes


def test_run_stops_at_the_first_limit_reached():
    loop, _, _ = _loop(episode_length=4)
    assert loop.run(num_episodes=2, num_steps=100) == 8
    loop, _, _ = _loop(episode_length=4)
    assert loop.run(num_episodes=100, num_steps=6) == 8
    with pytest.raises(ValueError, match="num_steps must be >= 0"):
        loop.run(num_steps=-1)


def test_observers_see_every_step_and_add_metrics():
    observer = CountingObserver()
    loop, _, _ = _loop(episode_length=5, observers=[observer])
    result = loop.run_episode()
    assert result["observed_steps"] == 5 and result["observed_episodes"] == 1
    assert observer.actions == [0] * 5
    assert loop.run_episode()["observed_episodes"] == 2


def test_nested_rewards_are_summed_leafwise():
    env = FakeEnvironment(episode_length=3, nested_rewards=True)
    loop = EnvironmentLoop(env, FakeActor(), logger=InMemoryLogger())
    episode_return = loop.run_episode()["episode_return"]
    assert float(episode_return["a"]) == 6.0
    np.testing.assert_allclose(episode_return["b"], [12.0, 18.0])


def test_default_logger_prints_to_terminal(capsys):
    loop = EnvironmentLoop(FakeEnvironment(episode_length=2), FakeActor(), label="fake_actor")
    loop.run(num_episodes=1)
    out = capsys.readouterr().out
    assert out.startswith("[fake_actor] episode_return = 3 | episode_length = 2")


def test_real_gymnasium_environment():
    environment = StepLimitWrapper(make_gymnasium_environment("CartPole-v1", seed=0), step_limit=50)
    rng = np.random.default_rng(0)
    actor = FakeActor(policy=lambda observation: rng.integers(2, dtype=np.int32))
    logger = InMemoryLogger()
    steps = EnvironmentLoop(environment, actor, logger=logger).run(num_episodes=3)
    lengths = [row["episode_length"] for row in logger.data]
    assert steps == sum(lengths) and all(1 <= n <= 50 for n in lengths)
    # CartPole gives reward 1 per step.
    assert [row["episode_return"] for row in logger.data] == [float(n) for n in lengths]
