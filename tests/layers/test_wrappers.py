"""Tests of the gymnasium adapter (on real gymnasium environments) and the dm_env wrappers."""

import collections

import dm_env
import gymnasium
import numpy as np
import pytest
from dm_env import specs
from gymnasium import spaces

from acmelike.wrappers import (
    ActionRepeatWrapper,
    EnvironmentWrapper,
    GymnasiumToDmEnv,
    SinglePrecisionWrapper,
    StepLimitWrapper,
    check_gymnasium_id,
    make_gymnasium_environment,
)
from fakes import FakeEnvironment


def _cartpole(seed=0, **kwargs):
    return GymnasiumToDmEnv(gymnasium.make("CartPole-v1", **kwargs), seed=seed)


# ----------------------------------------------------------------------------------------------- adapter


def test_cartpole_specs():
    env = _cartpole()
    assert env.action_spec() == specs.DiscreteArray(2, dtype=np.int64, name="action")
    observation_spec = env.observation_spec()
    assert observation_spec.shape == (4,) and observation_spec.dtype == np.float32
    # CartPole's Box has infinite bounds for the velocities, so the spec is a plain Array.
    assert type(observation_spec) is specs.Array
    assert env.reward_spec() == specs.Array((), np.float64, name="reward")
    discount_spec = env.discount_spec()
    assert isinstance(discount_spec, specs.BoundedArray) and discount_spec.dtype == np.float64
    assert discount_spec.minimum == 0.0 and discount_spec.maximum == 1.0
    assert isinstance(env.gymnasium_env, gymnasium.Env)


def test_step_types_and_termination():
    env = _cartpole()
    timestep = env.reset()
    assert timestep.first() and timestep.reward is None and timestep.discount is None
    env.observation_spec().validate(timestep.observation)
    timestep = env.step(np.int64(0))
    assert timestep.mid() and timestep.reward == 1.0 and timestep.discount == 1.0
    # Always pushing left makes the pole fall within a few dozen steps: a termination.
    for _ in range(100):
        timestep = env.step(0)
        if timestep.last():
            break
    assert timestep.last()
    assert timestep.discount == 0.0 and timestep.reward == 1.0


def test_truncation_has_discount_one():
    env = _cartpole(max_episode_steps=5)
    env.reset()
    step_types = []
    for i in range(5):
        timestep = env.step(i % 2)  # alternating keeps the pole up for 5 steps
        step_types.append(timestep.step_type)
    assert step_types == [dm_env.StepType.MID] * 4 + [dm_env.StepType.LAST]
    assert timestep.discount == 1.0


def test_auto_reset_after_last_and_before_first_reset():
    env = _cartpole(max_episode_steps=2)
    assert env.step(0).first()  # stepping a fresh environment starts an episode
    env.step(0)
    assert env.step(1).last()
    assert env.step(1).first()
    assert env.step(1).mid()


def test_seeding_is_deterministic_and_continues_the_rng():
    a, b, c = _cartpole(seed=3), _cartpole(seed=3), _cartpole(seed=4)
    first_a, first_b, first_c = a.reset(), b.reset(), c.reset()
    np.testing.assert_array_equal(first_a.observation, first_b.observation)
    assert not np.array_equal(first_a.observation, first_c.observation)
    # The second episode continues the seeded RNG: same across a and b, different from the first episode.
    second_a, second_b = a.reset(), b.reset()
    np.testing.assert_array_equal(second_a.observation, second_b.observation)
    assert not np.array_equal(first_a.observation, second_a.observation)


def test_discrete_action_validation():
    env = _cartpole()
    env.reset()
    env.step(np.int32(1))
    env.step(np.array(0))  # 0-d integer arrays are fine
    with pytest.raises(ValueError, match=r"out of range \[0, 1\].*DiscreteArray.*received 2"):
        env.step(2)
    with pytest.raises(ValueError, match="scalar integer.*shape \\(2,\\)"):
        env.step(np.array([0, 1]))
    with pytest.raises(ValueError, match="scalar integer.*received 1.5"):
        env.step(1.5)


def test_box_action_spec_and_validation():
    env = GymnasiumToDmEnv(gymnasium.make("Pendulum-v1"), seed=0)
    action_spec = env.action_spec()
    assert isinstance(action_spec, specs.BoundedArray)
    assert action_spec.shape == (1,) and action_spec.dtype == np.float32
    np.testing.assert_array_equal(action_spec.minimum, [-2.0])
    np.testing.assert_array_equal(action_spec.maximum, [2.0])
    assert isinstance(env.observation_spec(), specs.BoundedArray)  # Pendulum's Box bounds are finite
    env.reset()
    assert env.step(np.array([0.5])).mid()  # float64 is cast to the Box's float32
    with pytest.raises(ValueError, match=r"Pendulum-v1.*wrong shape \(2,\), expected \(1,\).*BoundedArray"):
        env.step(np.array([0.5, 0.5], np.float32))
    with pytest.raises(ValueError, match="out of range.*received array\\(\\[3"):
        env.step(np.array([3.0], np.float32))
    with pytest.raises(ValueError, match="out of range"):
        env.step(np.array([np.nan], np.float32))


def test_discrete_observations():
    env = GymnasiumToDmEnv(gymnasium.make("FrozenLake-v1"), seed=0)
    assert env.observation_spec() == specs.DiscreteArray(16, dtype=np.int64, name="observation")
    timestep = env.reset()
    assert timestep.observation.dtype == np.int64 and timestep.observation.shape == ()
    env.observation_spec().validate(timestep.observation)


class _DictObservationEnv(gymnasium.Env):
    observation_space = spaces.Dict({"position": spaces.Discrete(3)})
    action_space = spaces.Discrete(2)


def test_unsupported_space_is_a_type_error():
    with pytest.raises(TypeError, match="observation space Dict.*Discrete and .*Box"):
        GymnasiumToDmEnv(_DictObservationEnv())


class _ClosingEnv(gymnasium.Env):
    observation_space = spaces.Box(-1.0, 1.0, (2,), np.float32)
    action_space = spaces.Discrete(2, start=1)

    def __init__(self):
        self.closed = False
        self.last_action = None

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        return np.zeros(2, np.float32), {}

    def step(self, action):
        self.last_action = action
        return np.zeros(2, np.float32), 0.5, False, False, {}

    def close(self):
        self.closed = True


def test_close_and_discrete_start_offset():
    inner = _ClosingEnv()
    env = GymnasiumToDmEnv(inner)
    assert env.action_spec().num_values == 2
    env.reset()
    env.step(0)
    assert inner.last_action == 1 and type(inner.last_action) is int  # dm_env 0 is gymnasium's `start`
    env.close()
    assert inner.closed


def test_make_gymnasium_environment_is_single_precision():
    env = make_gymnasium_environment("CartPole-v1", seed=0)
    assert env.observation_spec().dtype == np.float32
    assert env.action_spec().dtype == np.int32
    assert env.reward_spec().dtype == np.float32 and env.discount_spec().dtype == np.float32
    env.reset()
    timestep = env.step(np.int32(1))
    assert timestep.observation.dtype == np.float32
    assert isinstance(timestep.reward, np.float32) and isinstance(timestep.discount, np.float32)
    assert isinstance(env.gymnasium_env, gymnasium.Env)  # forwarded through the wrapper


def test_unknown_environment_name_suggests_and_lists():
    with pytest.raises(ValueError) as error:
        make_gymnasium_environment("CartPole-v2", seed=0)
    message = str(error.value)
    assert "Unknown gymnasium environment 'CartPole-v2'" in message
    assert "Did you mean: 'CartPole-v1'" in message
    for available in ("Acrobot-v1", "MountainCar-v0", "Pendulum-v1", "FrozenLake-v1"):
        assert available in message
    assert "LunarLander" not in message  # ids needing extra packages are only counted
    with pytest.raises(ValueError, match="Unknown gymnasium environment 'Pendulum'.*'Pendulum-v1'"):
        check_gymnasium_id("Pendulum")
    check_gymnasium_id("MountainCar-v0")  # known: no error


# ----------------------------------------------------------------------------------------------- wrappers

Pair = collections.namedtuple("Pair", ["left", "right"])


class _DoublePrecisionEnv(dm_env.Environment):
    """Nested float64/int64 observations, int64 actions; records the actions it gets."""

    def __init__(self):
        self.actions = []

    def reset(self):
        return dm_env.restart(self._observation())

    def step(self, action):
        self.actions.append(action)
        return dm_env.transition(reward=0.25, observation=self._observation(), discount=np.float64(0.5))

    def _observation(self):
        return {
            "pixels": np.zeros((2, 2), np.uint8),
            "pair": Pair(np.ones(3, np.float64), np.arange(2, dtype=np.int64)),
            "list": [np.float64(1.5)],
        }

    def observation_spec(self):
        return {
            "pixels": specs.BoundedArray((2, 2), np.uint8, 0, 255),
            "pair": Pair(
                specs.BoundedArray((3,), np.float64, -1.0, 1.0), specs.Array((2,), np.int64, name="ints")
            ),
            "list": [specs.Array((), np.float64)],
        }

    def action_spec(self):
        return {"move": specs.DiscreteArray(4, dtype=np.int64), "force": specs.Array((2,), np.float64)}

    def reward_spec(self):
        return specs.Array((), np.float64)

    def discount_spec(self):
        return specs.BoundedArray((), np.float64, 0.0, 1.0)


def test_single_precision_specs_and_values():
    env = SinglePrecisionWrapper(_DoublePrecisionEnv())
    observation_spec = env.observation_spec()
    assert observation_spec["pixels"].dtype == np.uint8  # untouched
    assert isinstance(observation_spec["pair"], Pair)
    assert observation_spec["pair"].left.dtype == np.float32
    assert isinstance(observation_spec["pair"].left, specs.BoundedArray)
    assert observation_spec["pair"].left.minimum.dtype == np.float32
    assert observation_spec["pair"].right == specs.Array((2,), np.int32, name="ints")
    assert observation_spec["list"][0].dtype == np.float32
    assert env.action_spec()["move"] == specs.DiscreteArray(4, dtype=np.int32)
    assert env.reward_spec().dtype == np.float32 and env.discount_spec().dtype == np.float32

    timestep = env.reset()
    assert timestep.observation["pair"].left.dtype == np.float32
    assert timestep.observation["pair"].right.dtype == np.int32
    assert timestep.observation["list"][0].dtype == np.float32
    assert timestep.reward is None and timestep.discount is None
    timestep = env.step({"move": np.int32(3), "force": np.zeros(2, np.float32)})
    assert isinstance(timestep.reward, np.float32) and timestep.reward == 0.25
    assert isinstance(timestep.discount, np.float32) and timestep.discount == 0.5
    # Actions are widened back to the wrapped environment's dtypes.
    action = env.environment.actions[-1]
    assert action["move"].dtype == np.int64 and action["force"].dtype == np.float64


def test_single_precision_leaves_other_action_types_for_the_inner_env():
    env = SinglePrecisionWrapper(_cartpole())
    env.reset()
    assert env.step(np.int32(1)).mid()
    with pytest.raises(ValueError, match="scalar integer"):
        env.step(np.float32(1.0))  # not silently truncated to an integer


def test_step_limit_truncates():
    env = StepLimitWrapper(FakeEnvironment(episode_length=10), step_limit=3)
    assert env.reset().first()
    assert env.step(0).mid() and env.step(0).mid()
    timestep = env.step(0)
    assert timestep.last() and timestep.discount == 1.0 and timestep.reward == 3.0
    assert env.step(0).first()  # the next step resets the wrapped environment
    assert env.environment.num_resets == 2


def test_step_limit_passes_earlier_terminations_through():
    env = StepLimitWrapper(FakeEnvironment(episode_length=2), step_limit=5)
    env.reset()
    env.step(0)
    timestep = env.step(0)
    assert timestep.last() and timestep.discount == 0.0
    assert env.step(0).first()


def test_step_limit_on_gymnasium_and_validation():
    env = StepLimitWrapper(make_gymnasium_environment("CartPole-v1", seed=0), step_limit=4)
    assert isinstance(env, EnvironmentWrapper)
    env.reset()
    timesteps = [env.step(i % 2) for i in range(4)]
    assert [t.last() for t in timesteps] == [False, False, False, True]
    assert timesteps[-1].discount == 1.0
    for bad in (0, -1, 2.5):
        with pytest.raises(ValueError, match="step_limit"):
            StepLimitWrapper(FakeEnvironment(), step_limit=bad)


def test_action_repeat_sums_rewards_and_stops_at_a_termination():
    env = ActionRepeatWrapper(FakeEnvironment(episode_length=7), repeats=3)
    assert env.reset().first()
    first, second, third = env.step(1), env.step(2), env.step(0)
    assert first.mid() and first.reward == 1 + 2 + 3 and first.observation[0] == 3
    assert second.mid() and second.reward == 4 + 5 + 6
    # The 7th environment step terminates: the run of repeats stops there, discount 0 kept.
    assert third.last() and third.reward == 7 and third.discount == 0.0
    assert env.environment.actions == [1, 1, 1, 2, 2, 2, 0]
    assert first.reward + second.reward + third.reward == 7 * 8 / 2  # the unwrapped episode's return
    assert env.step(0).first() and env.environment.num_resets == 2  # dm_env's auto-reset is not repeated


def test_action_repeat_keeps_a_truncation_bootstrappable():
    env = ActionRepeatWrapper(StepLimitWrapper(FakeEnvironment(episode_length=100), step_limit=10), repeats=4)
    env.reset()
    timesteps = [env.step(0) for _ in range(3)]  # 4 + 4 + 2 environment steps
    assert [t.last() for t in timesteps] == [False, False, True]
    assert timesteps[-1].discount == 1.0 and timesteps[-1].reward == 9 + 10


class _HalfDiscount(EnvironmentWrapper):
    """Discount 0.5 on every step but the first and the last (an environment that discounts within an episode)."""

    def step(self, action):
        timestep = self._environment.step(action)
        return timestep if timestep.first() or timestep.last() else timestep._replace(discount=0.5)


def test_action_repeat_multiplies_the_discounts_of_its_steps():
    env = ActionRepeatWrapper(_HalfDiscount(FakeEnvironment(episode_length=10)), repeats=3)
    env.reset()
    assert env.step(0).discount == 0.5 ** 3


def test_action_repeat_validation_and_one_repeat_is_the_environment():
    for bad in (0, -2, 2.0, True):
        with pytest.raises(ValueError, match="repeats"):
            ActionRepeatWrapper(FakeEnvironment(), repeats=bad)
    env, plain = ActionRepeatWrapper(FakeEnvironment(), repeats=1), FakeEnvironment()
    env.reset(), plain.reset()
    for _ in range(6):
        wrapped, unwrapped = env.step(0), plain.step(0)
        assert wrapped.step_type == unwrapped.step_type and wrapped.reward == unwrapped.reward
