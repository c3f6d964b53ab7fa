"""MuJoCo Playground's Control Suite tasks under `--launch anakin` (`acmelike.anakin.playground`): the adapter's
spec, its clock (1,000-step episodes end with discount 1), MJX's JAX physics rather than Warp's, refused names, and
SAC's fully jitted form learning playground/CartpoleBalance (a long test: compiling it takes minutes on a CPU).

Playground needs today's stack (the `playground` extra); without it the module is skipped."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from stack import long_test, require

require("mujoco_playground")

from acmelike.anakin import make_playground_environment  # noqa: E402
from launch.engines.anakin import AnakinConfig, run_anakin  # noqa: E402
from launch.experiments.make import make_agent_config  # noqa: E402

BALANCE = "playground/CartpoleBalance"


@pytest.fixture(scope="module")
def environment():
    return make_playground_environment(BALANCE)


def test_the_spec_is_the_suite_s_cartpole_features_and_a_unit_action_box(environment):
    spec = environment.spec
    # The suite's cartpole observations, flattened: cart position, the pole's cosine and sine, two velocities.
    assert spec.observations.shape == (5,) and spec.observations.dtype == np.float32
    assert spec.actions.shape == (1,) and spec.actions.dtype == np.float32
    np.testing.assert_array_equal([spec.actions.minimum, spec.actions.maximum], [-1.0, 1.0])


def test_the_task_runs_on_mjx_s_jax_physics_and_its_episode_ends_on_the_clock_with_discount_one(monkeypatch):
    from mujoco_playground import dm_control_suite

    load, implementations = dm_control_suite.load, []

    def spy(task, config):
        implementations.append(config.impl)
        return load(task, config=config)

    monkeypatch.setattr(dm_control_suite, "load", spy)
    short = make_playground_environment(BALANCE, episode_length=3)  # the config's 1,000 steps, cut to 3
    assert implementations == ["jax"] and short.name == BALANCE

    @jax.jit  # MJX's reset, run op by op, would take longer than compiling it
    def unroll(key):
        state, first = short.reset(key)

        def step(state, key):
            return short.step(key, state, jnp.zeros((1,)))

        return first, jax.lax.scan(step, state, jax.random.split(key, 3))[1]

    first, steps = unroll(jax.random.PRNGKey(0))
    assert first.shape == (5,)
    np.testing.assert_array_equal(steps.last, [False, False, True])
    np.testing.assert_array_equal(steps.discount, 1.0)  # balancing never terminates: the clock truncates
    assert np.all((steps.reward > 0) & (steps.reward <= 1)), steps.reward  # the suite's rewards lie in [0, 1]


def test_an_unknown_or_downloading_task_is_refused_naming_the_control_suite_tasks():
    with pytest.raises(ValueError, match="playground/CheetahRun"):
        make_playground_environment("playground/no_such_task")
    with pytest.raises(ValueError, match="download robot models"):
        make_playground_environment("playground/Go1JoystickFlatTerrain")  # a locomotion task: the Menagerie's Go1
    with pytest.raises(ValueError, match="Unknown MuJoCo Playground"):
        AnakinConfig(agent="sac", environment="playground/no_such_task", max_num_actor_steps=100)


# SAC's small settings (64-unit networks, batches of 64) with 3-step returns, at two SGD steps per environment step:
# 4 environments, each writing one step per iteration.
FAST = ["policy_hidden_sizes=64,64", "critic_hidden_sizes=64,64", "batch_size=64", "samples_per_insert=128",
        "n_step=3"]


# Compiling SAC with MJX's physics takes minutes on a CPU: a long test (CI runs SAC's form on brax/inverted_pendulum
# through the same adapter, `from_brax_env`). Of 1,000 a 1,000-step episode can earn. The 4 environments end their
# episodes together, every 4,000 steps: the average is over that last batch. Seed 0's first four (an untrained
# policy) returned 206.9-321.9.
BALANCED = 800.0


@long_test
def test_sac_learns_playground_s_cartpole_balance_fully_jitted():
    summary = run_anakin(AnakinConfig(
        agent="sac", environment=BALANCE, max_num_actor_steps=40_960, seeds=(0,),
        agent_config=make_agent_config("sac", FAST), stop_at_average_return=BALANCED, return_window=4,
        iterations_per_call=1024, progress_period_s=0,
    ))
    assert summary["average_return_last_4"] >= BALANCED, summary
