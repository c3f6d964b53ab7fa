"""VectorEnvironment: B gymnasium environments stepped together keep each sub-environment's dm_env episodes."""

import dm_env
import gymnasium
import numpy as np
import pytest

from acmelike.wrappers import GymnasiumToDmEnv, VectorEnvironment, make_vector_environment

FIRST, MID, LAST = dm_env.StepType.FIRST, dm_env.StepType.MID, dm_env.StepType.LAST


def _run_side_by_side(num_envs, num_steps, max_episode_steps, seed=3):
    """Steps a SyncVectorEnv-backed VectorEnvironment and B single adapters with the same seeds and actions."""
    vector = make_vector_environment(
        "CartPole-v1", num_envs, seed, numpy_vectorised=False, max_episode_steps=max_episode_steps
    )
    singles = [
        GymnasiumToDmEnv(gymnasium.make("CartPole-v1", max_episode_steps=max_episode_steps), seed=seed + i, single_precision=True)
        for i in range(num_envs)
    ]
    rng = np.random.default_rng(0)
    seen = {"terminated": 0, "truncated": 0}
    timestep = vector.reset()
    expected = [env.reset() for env in singles]
    for step in range(num_steps + 1):
        for i, single in enumerate(expected):
            assert timestep.step_type[i] == single.step_type, (step, i)
            np.testing.assert_array_equal(timestep.observation[i], single.observation)
            if single.step_type != FIRST:
                assert timestep.reward[i] == single.reward and timestep.discount[i] == single.discount
            if single.step_type == LAST:
                seen["terminated" if single.discount == 0 else "truncated"] += 1
        if step == num_steps:
            break
        actions = rng.integers(0, 2, num_envs).astype(np.int32)
        timestep = vector.step(actions)
        # A single environment restarts on the step after its LAST, ignoring the action, as the vector env does.
        expected = [env.step(int(a)) for env, a in zip(singles, actions)]
    return seen


def test_matches_separate_environments_across_terminations_and_truncations():
    seen = _run_side_by_side(num_envs=3, num_steps=150, max_episode_steps=15)
    assert seen["terminated"] >= 3 and seen["truncated"] >= 3, seen


def test_numpy_vectorised_cartpole_keeps_each_sub_environments_episodes():
    num_envs, limit = 4, 12
    vector = make_vector_environment("CartPole-v1", num_envs, 0, max_episode_steps=limit)
    assert type(vector.gymnasium_env).__name__ == "CartPoleVectorEnv"
    timestep = vector.reset()
    assert (timestep.step_type == FIRST).all()
    lengths = np.zeros(num_envs, int)
    previous = timestep.step_type
    ends = {"terminated": 0, "truncated": 0}
    for _ in range(200):
        timestep = vector.step(np.ones(num_envs, np.int32))  # always right: terminates in ~10 steps
        for i in range(num_envs):
            kind = timestep.step_type[i]
            assert (kind == FIRST) == (previous[i] == LAST), "a FIRST exactly after each LAST"
            if kind == FIRST:
                assert timestep.reward[i] == 0
                lengths[i] = 0
                continue
            lengths[i] += 1
            assert lengths[i] <= limit
            if kind == LAST:
                ends["terminated" if timestep.discount[i] == 0 else "truncated"] += 1
                assert timestep.discount[i] == 0 or lengths[i] == limit
            else:
                assert timestep.discount[i] == 1
        previous = timestep.step_type
    assert ends["terminated"] > 0
    assert timestep.observation.shape == (num_envs, 4) and timestep.observation.dtype == np.float32


def test_bad_input_names_the_problem():
    with pytest.raises(ValueError, match="num_envs"):
        make_vector_environment("CartPole-v1", 0, 0)
    vector = make_vector_environment("CartPole-v1", 2, 0)
    vector.reset()
    with pytest.raises(ValueError, match="one action per sub-environment"):
        vector.step(np.zeros(3, np.int32))
    same_step = gymnasium.vector.SyncVectorEnv(
        [lambda: gymnasium.make("CartPole-v1")], autoreset_mode=gymnasium.vector.AutoresetMode.SAME_STEP
    )
    with pytest.raises(ValueError, match="NEXT_STEP"):
        VectorEnvironment(same_step)
