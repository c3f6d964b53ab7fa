"""Brax's locomotion tasks under `--launch anakin` (`acmelike.anakin.brax`): the adapter's spec, its episode ends
(the task's own termination: discount 0; the adapter's clock: discount 1), refused names, and SAC's fully jitted
form on brax/inverted_pendulum (a short run in CI; learning to balance it is a long test).

brax needs today's stack (the `brax` extra); without it the module is skipped."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from stack import long_test, require

require("brax")

from acmelike.anakin import make_brax_environment  # noqa: E402
from launch.engines.anakin import AnakinConfig, run_anakin  # noqa: E402
from launch.experiments.make import make_agent_config  # noqa: E402

PENDULUM = "brax/inverted_pendulum"


def _unroll(environment, action, steps):
    """`steps` steps of one environment from reset(0) under a constant `action`: the JaxTimeSteps, stacked."""
    state, first = environment.reset(jax.random.PRNGKey(0))

    def step(state, key):
        return environment.step(key, state, action)

    return first, jax.lax.scan(step, state, jax.random.split(jax.random.PRNGKey(1), steps))[1]


@pytest.fixture(scope="module")
def environment():
    """The inverted pendulum with 3-step episodes."""
    return make_brax_environment(PENDULUM, episode_length=3)


def test_the_spec_is_brax_s_unit_action_box_and_its_observation_vector(environment):
    spec = environment.spec
    assert spec.observations.shape == (4,) and spec.observations.dtype == np.float32  # cart, pole; their velocities
    assert spec.actions.shape == (1,) and spec.actions.dtype == np.float32
    np.testing.assert_array_equal([spec.actions.minimum, spec.actions.maximum], [-1.0, 1.0])


def test_a_fall_terminates_with_discount_zero_and_the_clock_truncates_with_discount_one(environment):
    first, steps = _unroll(environment, jnp.ones((1,)), 3)  # pushed hard: the pole falls (|angle| > 0.2) at once
    assert first.shape == (4,) and first.dtype == jnp.float32
    assert bool(steps.last[1]) and float(steps.discount[1]) == 0.0, steps
    np.testing.assert_array_equal(steps.reward, 1.0)  # one a step while balancing, the falling step's included
    _, steps = _unroll(environment, jnp.zeros((1,)), 3)  # left alone, the pole stays up for 3 steps
    np.testing.assert_array_equal(steps.last, [False, False, True])
    np.testing.assert_array_equal(steps.discount, 1.0)  # truncation: bootstrap from the last observation


def test_an_unknown_task_or_a_discrete_agent_is_refused_naming_the_choices():
    with pytest.raises(ValueError, match="brax/hopper"):
        make_brax_environment("brax/no_such_task")
    with pytest.raises(ValueError, match="gymnax/CartPole-v1"):
        AnakinConfig(agent="dqn", environment=PENDULUM, max_num_actor_steps=100)
    with pytest.raises(ValueError, match="Unknown brax task"):
        AnakinConfig(agent="sac", environment="brax/no_such_task", max_num_actor_steps=100)


# SAC's small Pendulum settings (64-unit networks, batches of 64) with 3-step returns, at two SGD steps per
# environment step: 4 environments, each writing one step per iteration.
FAST = ["policy_hidden_sizes=64,64", "critic_hidden_sizes=64,64", "batch_size=64", "samples_per_insert=128",
        "n_step=3"]


def test_sac_runs_fully_jitted_on_a_brax_task():
    summary = run_anakin(AnakinConfig(
        agent="sac", environment=PENDULUM, max_num_actor_steps=4 * 64, seeds=(0,),
        agent_config=make_agent_config("sac", FAST + ["min_replay_size=64"]), iterations_per_call=64,
        progress_period_s=0,
    ))
    assert summary["env_steps"] == 4 * 64 and summary["learner_steps"] > 0 and summary["episodes"] > 0, summary
    assert np.isfinite(summary["average_return_last_20"]), summary


BALANCED = 400.0  # of 1,000 steps an episode can last; uniformly random actions average 5.5 (500 episodes)


@long_test
def test_sac_learns_to_balance_brax_s_inverted_pendulum_fully_jitted():
    summary = run_anakin(AnakinConfig(
        agent="sac", environment=PENDULUM, max_num_actor_steps=32_768, seeds=(0,),
        agent_config=make_agent_config("sac", FAST), stop_at_average_return=BALANCED, iterations_per_call=512,
        progress_period_s=0,
    ))
    assert summary["average_return_last_20"] >= BALANCED, summary
