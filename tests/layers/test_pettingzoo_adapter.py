"""The PettingZoo Parallel-API adapter: agents that leave early lose no step and gain none; bad actions name the
agent; specs are per-agent dicts; the real MPE environments build with heterogeneous specs."""

import dm_env
import numpy as np
import pytest
from fakes import FakeActor, FakeParallelEnv, fake_multiagent_environment

from acmelike.loggers import InMemoryLogger
from acmelike.specs import make_environment_spec
from acmelike.wrappers.pettingzoo_adapter import (
    AgentObservation,
    PettingZooToDmEnv,
    agent_ids,
    check_pettingzoo_id,
    is_multiagent_spec,
    make_pettingzoo_environment,
)
from environment_loops import EnvironmentLoop

IDS = ("a", "b", "c")  # leave after 3 (terminated), 5 (truncated) and 6 (truncated) steps


def _episode(env, action=1):
    timesteps = [env.reset()]
    while not timesteps[-1].last():
        timesteps.append(env.step({agent: np.int32(action) for agent in IDS}))
    return timesteps


def test_agents_that_leave_early_lose_no_step_and_gain_none():
    fake = FakeParallelEnv()
    env = PettingZooToDmEnv(fake, seed=7)
    timesteps = _episode(env, action=2)
    assert [ts.step_type for ts in timesteps] == [dm_env.StepType.FIRST] + [dm_env.StepType.MID] * 5 + [
        dm_env.StepType.LAST]
    leave_at, terminated = {"a": 3, "b": 5, "c": 6}, {"a": True, "b": False, "c": False}
    for t, ts in enumerate(timesteps):
        for index, agent in enumerate(IDS):
            observation = ts.observation[agent]
            assert isinstance(observation, AgentObservation)
            assert bool(observation.active) == (t < leave_at[agent])  # acts on this observation
            # The observation is the env's latest for the agent: its final one is held, never a new one.
            np.testing.assert_array_equal(observation.observation, np.full(2, 100 * index + min(t, leave_at[agent])))
            if t == 0:
                continue
            if t <= leave_at[agent]:  # it acted at t - 1: its own reward, and discount 0 only if it terminated
                assert ts.reward[agent] == t + 10 * index + 2
                assert ts.discount[agent] == (0.0 if terminated[agent] and t == leave_at[agent] else 1.0)
            else:  # gone: nothing received
                assert ts.reward[agent] == 0.0 and ts.discount[agent] == 0.0
    # The env saw exactly the live agents' actions: 3 + 5 + 6 agent steps, one per active observation.
    assert [sorted(joint) for joint in fake.joint_actions] == [list(IDS)] * 3 + [["b", "c"]] * 2 + [["c"]]
    active_observations = sum(bool(ts.observation[a].active) for ts in timesteps for a in IDS)
    assert active_observations == sum(len(joint) for joint in fake.joint_actions) == 14


def test_timestep_values_match_the_specs_and_the_episode_restarts_after_last():
    fake = FakeParallelEnv()
    env = PettingZooToDmEnv(fake, seed=7)
    spec = make_environment_spec(env)
    assert is_multiagent_spec(spec) and agent_ids(spec) == IDS
    for ts in _episode(env)[1:]:
        for agent in IDS:
            spec.observations[agent].observation.validate(ts.observation[agent].observation)
            spec.observations[agent].active.validate(ts.observation[agent].active)
            spec.rewards[agent].validate(ts.reward[agent])
            spec.discounts[agent].validate(ts.discount[agent])
    assert env.step({agent: 0 for agent in IDS}).first()  # dm_env auto-reset after LAST
    assert fake.seeds == [7, None]  # seeded once; later episodes continue its RNG


def test_absent_agents_need_no_action_but_active_ones_do():
    env = PettingZooToDmEnv(FakeParallelEnv())
    env.reset()
    for _ in range(3):
        env.step({agent: 0 for agent in IDS})
    env.step({"b": 0, "c": 0})  # "a" has left: its action may be left out
    with pytest.raises(ValueError, match=r"no action for agent 'b', which is active.*\(b, c\)"):
        env.step({"c": 0})


def test_an_unknown_agent_id_or_a_bad_action_names_the_agent():
    env = PettingZooToDmEnv(FakeParallelEnv())
    env.reset()
    with pytest.raises(ValueError, match=r"has no agent 'd' .*its agents are a, b, c"):
        env.step({"a": 0, "b": 0, "c": 0, "d": 0})
    with pytest.raises(ValueError, match=r"invalid action 3 for agent 'b'; expected an integer in \[0, 2\]"):
        env.step({"a": 0, "b": 3, "c": 0})
    with pytest.raises(ValueError, match=r"dict of actions keyed by agent id \(a, b, c\)"):
        env.step(np.zeros(3, np.int32))


def test_heterogeneous_specs_are_per_agent():
    spec = make_environment_spec(fake_multiagent_environment(0, observation_sizes=(2, 2, 5)))
    assert [spec.observations[a].observation.shape for a in IDS] == [(2,), (2,), (5,)]


def test_environment_loop_logs_team_and_per_agent_returns():
    class DictActor(FakeActor):
        def select_action(self, observation):
            return {agent: np.int32(1) for agent in observation}

    loop = EnvironmentLoop(PettingZooToDmEnv(FakeParallelEnv()), DictActor(), logger=InMemoryLogger())
    result = loop.run_episode()
    # Agent i's reward at step t is t + 10 i + 1, for t up to when it leaves.
    expected = {"a": sum(t + 1 for t in range(1, 4)), "b": sum(t + 11 for t in range(1, 6)),
                "c": sum(t + 21 for t in range(1, 7))}
    assert {agent: result[f"episode_return/{agent}"] for agent in IDS} == expected
    assert result["episode_return"] == sum(expected.values()) and result["episode_length"] == 6


def test_mpe_environments_build_with_per_agent_specs():
    spread = make_environment_spec(make_pettingzoo_environment("mpe/simple_spread_v3", seed=0))
    assert agent_ids(spread) == ("agent_0", "agent_1", "agent_2")
    assert {s.observation.shape for s in spread.observations.values()} == {(18,)}
    adversary = make_pettingzoo_environment("mpe/simple_adversary_v3", seed=0)
    spec = make_environment_spec(adversary)
    assert spec.observations["adversary_0"].observation.shape == (8,)
    assert spec.observations["agent_0"].observation.shape == (10,)
    timestep = adversary.reset()
    while not timestep.last():
        timestep = adversary.step({agent: np.int32(0) for agent in agent_ids(spec)})
    assert not any(bool(o.active) for o in timestep.observation.values())


def test_unknown_multiagent_environment_lists_the_known_ones():
    with pytest.raises(ValueError, match=r"Unknown multi-agent environment 'mpe/simple_spred_v3'; known: "
                                         r"mpe/simple_adversary_v3, mpe/simple_spread_v3"):
        check_pettingzoo_id("mpe/simple_spred_v3")
