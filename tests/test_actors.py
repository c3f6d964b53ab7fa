"""Actor cores and GenericActor."""

import dm_env
import jax
import jax.numpy as jnp
import numpy as np

from acmelike.actors import GenericActor, categorical_policy_core, epsilon_greedy_core
from acmelike.variables import VariableClient


def _q_values(params, observations):
    return jnp.broadcast_to(params, (observations.shape[0],) + params.shape)


class _Source:
    def __init__(self, value):
        self.value = value

    def get_variables(self, names):
        return [self.value for _ in names]


class _RecordingAdder:
    def __init__(self):
        self.calls = []

    def add_first(self, timestep):
        self.calls.append(("first", timestep))

    def add(self, action, next_timestep, extras=()):
        self.calls.append(("add", int(action), extras))

    def reset(self):
        pass


def test_epsilon_greedy_is_greedy_at_zero_and_explores_at_one():
    params = jnp.array([0.0, 3.0, 1.0])
    greedy = jax.jit(epsilon_greedy_core(_q_values, lambda steps: 0.0).select_action)
    core = epsilon_greedy_core(_q_values, lambda steps: 0.0)
    state = core.init(jax.random.PRNGKey(0))
    for _ in range(5):
        action, state = greedy(params, jnp.zeros(2), state)
        assert int(action) == 1
    assert int(state.steps) == 5

    explore = epsilon_greedy_core(_q_values, lambda steps: 1.0)
    step = jax.jit(explore.select_action)
    state = explore.init(jax.random.PRNGKey(1))
    actions = []
    for _ in range(300):
        action, state = step(params, jnp.zeros(2), state)
        actions.append(int(action))
    counts = np.bincount(actions, minlength=3)
    assert counts.min() > 60, counts  # roughly uniform


def test_epsilon_schedule_follows_actor_steps():
    schedule = lambda steps: jnp.where(steps < 3, 1.0, 0.0)  # noqa: E731
    core = epsilon_greedy_core(_q_values, schedule)
    step = jax.jit(core.select_action)
    state = core.init(jax.random.PRNGKey(0))
    params = jnp.array([0.0, 0.0, 9.0])
    for _ in range(3):
        _, state = step(params, jnp.zeros(1), state)
    for _ in range(10):
        action, state = step(params, jnp.zeros(1), state)
        assert int(action) == 2


def test_categorical_core_records_log_prob_and_greedy_mode():
    logits = jnp.array([0.0, jnp.log(3.0)])  # p = [0.25, 0.75]
    core = categorical_policy_core(_q_values)
    state = core.init(jax.random.PRNGKey(0))
    action, state = jax.jit(core.select_action)(logits, jnp.zeros(1), state)
    expected = np.log([0.25, 0.75])[int(action)]
    np.testing.assert_allclose(core.get_extras(state)["log_prob"], expected, rtol=1e-5)
    greedy = categorical_policy_core(_q_values, greedy=True)
    action, _ = greedy.select_action(logits, jnp.zeros(1), greedy.init(jax.random.PRNGKey(0)))
    assert int(action) == 1


def test_generic_actor_feeds_adder_with_extras_and_updates_variables():
    adder = _RecordingAdder()
    client = VariableClient(_Source(jnp.array([0.0, 5.0])), "policy", update_period=2)
    actor = GenericActor(categorical_policy_core(_q_values, greedy=True), jax.random.PRNGKey(0), client, adder)
    first = dm_env.restart(np.zeros(1, np.float32))
    actor.observe_first(first)
    action = actor.select_action(first.observation)
    assert isinstance(action, np.ndarray) and int(action) == 1
    actor.observe(action, dm_env.transition(1.0, np.zeros(1, np.float32)))
    kind, recorded_action, extras = adder.calls[-1]
    assert kind == "add" and recorded_action == 1 and "log_prob" in extras
    assert isinstance(extras["log_prob"], np.ndarray)
    actor.update()
    actor.update()
    assert client.num_fetches == 2  # one on first use, one after update_period calls
