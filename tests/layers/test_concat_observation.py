"""ConcatObservationWrapper on a nested spec (order, shapes, dtypes, the spec it reports), when it applies by itself
(`concatenate_state_nest`, make_experiment_config), and the error that names it when it does not."""

import numpy as np
import pytest
from dm_env import specs

from acmelike.specs import flat_observation_size, make_environment_spec
from acmelike.wrappers import ConcatObservationWrapper, concatenate_state_nest, is_state_nest
from fakes import FakeNestedEnvironment, fake_multiagent_environment
from launch import make_experiment_config

LAYOUT = "position[0:3],sensors/height[3:4],sensors/touch[4:6],velocity[6:8]"


def test_a_nest_becomes_one_float32_vector_in_sorted_key_order():
    inner = FakeNestedEnvironment(episode_length=2)
    environment = ConcatObservationWrapper(inner)
    assert environment.observation_spec() == specs.Array((8,), np.float32, name=LAYOUT)
    # Actions, rewards and discounts are the wrapped environment's.
    assert environment.action_spec() == inner.action_spec() and environment.reward_spec() == inner.reward_spec()
    assert environment.discount_spec() == inner.discount_spec()
    first = environment.reset()
    assert first.first() and first.observation.dtype == np.float32 and first.observation.shape == (8,)
    # position, sensors/height, sensors/touch (bools as 0 and 1), velocity: the keys sorted, nested ones by path.
    np.testing.assert_array_equal(first.observation, [1, 2, 3, 6, 1, 0, 4, 5])
    second = environment.step(np.zeros(1, np.float32))
    np.testing.assert_array_equal(second.observation, [11, 12, 13, 16, 1, 0, 14, 15])
    assert second.reward == 1.0 and second.discount == 1.0
    last = environment.step(np.zeros(1, np.float32))
    assert last.last() and last.discount == 0.0 and last.observation.shape == (8,)


def test_the_order_does_not_depend_on_the_order_a_dict_was_built_in():
    forward = {"b": specs.Array((2,), np.float32), "a": specs.Array((1,), np.float32)}
    backward = {"a": specs.Array((1,), np.float32), "b": specs.Array((2,), np.float32)}
    assert ConcatObservationWrapper(_Observing(forward)).observation_spec().name == "a[0:1],b[1:3]"
    assert ConcatObservationWrapper(_Observing(backward)).observation_spec().name == "a[0:1],b[1:3]"
    # Lists and tuples keep their order; a matrix (rank 2) flattens row by row.
    nest = [specs.Array((2, 2), np.float32), (specs.Array((), np.float32),)]
    assert ConcatObservationWrapper(_Observing(nest)).observation_spec().name == "0[0:4],1/0[4:5]"


def test_which_nests_concatenate_by_themselves():
    assert is_state_nest(FakeNestedEnvironment().observation_spec())
    assert is_state_nest({"arm_pos": specs.Array((8, 2), np.float64)})  # a Control Suite manipulator's matrix
    assert not is_state_nest(FakeNestedEnvironment(frames=True).observation_spec())  # an image beside the vectors
    assert not is_state_nest({"index": specs.DiscreteArray(4), "x": specs.Array((2,), np.float32)})
    assert not is_state_nest(specs.Array((3,), np.float32))  # one array: nothing to concatenate
    assert not is_state_nest({})


def test_concatenate_state_nest_leaves_images_single_arrays_and_multiagent_dicts_alone():
    assert isinstance(concatenate_state_nest(FakeNestedEnvironment()), ConcatObservationWrapper)
    for environment in (FakeNestedEnvironment(frames=True), _Observing(specs.Array((3,), np.float32)),
                        fake_multiagent_environment(0)):
        assert concatenate_state_nest(environment) is environment


def test_a_single_array_or_an_observation_off_its_spec_is_refused():
    with pytest.raises(ValueError, match="one array already"):
        ConcatObservationWrapper(_Observing(specs.Array((3,), np.float32)))
    environment = ConcatObservationWrapper(_Observing({"a": specs.Array((2,), np.float32)}, {"a": np.zeros(3)}))
    with pytest.raises(ValueError, match=r"3 values does not fit the observation spec's layout a\[0:2\]"):
        environment.reset()


def test_make_experiment_config_concatenates_a_dm_env_nest_for_an_mlp_agent():
    config = make_experiment_config(agent="sac", environment="nested", max_num_actor_steps=100,
                                    environment_factory=lambda seed: FakeNestedEnvironment())
    spec = make_environment_spec(config.environment_factory(0))
    assert spec.observations == specs.Array((8,), np.float32, name=LAYOUT)


def test_an_image_beside_vectors_is_an_error_naming_the_wrapper():
    with pytest.raises(ValueError) as error:
        make_experiment_config(agent="sac", environment="nested-with-pixels", max_num_actor_steps=100,
                               environment_factory=lambda seed: FakeNestedEnvironment(frames=True))
    message = str(error.value)
    assert "SAC's MLP network needs one floating-point or bool array observation" in message
    assert "ConcatObservationWrapper" in message and "it holds pixels" in message and "CartPole" not in message
    # A nest given to the networks directly, unconcatenated, says how to concatenate it.
    spec = make_environment_spec(FakeNestedEnvironment())
    with pytest.raises(ValueError, match="ConcatObservationWrapper concatenates a nest"):
        flat_observation_size(spec, agent="DQN")


class _Observing(FakeNestedEnvironment):
    """Observes `observation` (zeros of `spec` by default) under `spec`."""

    def __init__(self, spec, observation=None):
        super().__init__()
        self._spec = spec
        self._value = observation

    def observation_spec(self):
        return self._spec

    def _observation(self):
        if self._value is not None:
            return self._value
        return _zeros(self._spec)


def _zeros(spec):
    if isinstance(spec, dict):
        return {key: _zeros(value) for key, value in spec.items()}
    if isinstance(spec, (list, tuple)):
        return type(spec)(_zeros(value) for value in spec)
    return np.zeros(spec.shape, spec.dtype)
