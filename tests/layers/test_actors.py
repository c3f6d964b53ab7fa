"""Actor cores and GenericActor."""

import dm_env
import jax
import jax.numpy as jnp
import numpy as np

from acmelike.actors import GenericActor, categorical_policy_core, epsilon_greedy_core
from acmelike.variables import VariableClient
from fakes import FakeVariableSource, RecordingAdder


def _q_values(params, observations):
    return jnp.broadcast_to(params, (observations.shape[0],) + params.shape)


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
    adder = RecordingAdder()
    client = VariableClient(FakeVariableSource(jnp.array([0.0, 5.0])), "policy", update_period=2)
    actor = GenericActor(categorical_policy_core(_q_values, greedy=True), jax.random.PRNGKey(0), client, adder)
    first = dm_env.restart(np.zeros(1, np.float32))
    actor.observe_first(first)
    action = actor.select_action(first.observation)
    assert isinstance(action, np.ndarray) and int(action) == 1
    actor.observe(action, dm_env.transition(1.0, np.zeros(1, np.float32)))
    kind, recorded_action, _, extras = adder.calls[-1]
    assert kind == "add" and int(recorded_action) == 1 and "log_prob" in extras
    assert isinstance(extras["log_prob"], np.ndarray)
    actor.update()
    actor.update()
    assert client.num_fetches == 2  # one on first use, one after update_period calls


def _run_episodes(actor, episodes: int, length: int):
    for _ in range(episodes):
        timestep = dm_env.restart(np.zeros(1, np.float32))
        actor.observe_first(timestep)
        for t in range(length):
            action = actor.select_action(timestep.observation)
            timestep = dm_env.transition(0.0, np.zeros(1, np.float32)) if t < length - 1 else dm_env.termination(
                0.0, np.zeros(1, np.float32)
            )
            actor.observe(action, timestep)


def test_episode_hook_resets_recurrent_like_state_but_not_the_exploration_clock():
    from acmelike.actors import ActorCore

    # A recurrent-like core: `memory` counts the steps of the current episode and must restart at each episode;
    # `lifetime` counts every step of the actor's life. Extras report the memory that chose the action.
    counting_core = ActorCore(
        init=lambda key: {"memory": jnp.zeros((), jnp.int32), "chose_with": jnp.zeros((), jnp.int32),
                          "lifetime": jnp.zeros((), jnp.int32)},
        select_action=lambda params, obs, s: (
            jnp.int32(0),
            {"memory": s["memory"] + 1, "chose_with": s["memory"], "lifetime": s["lifetime"] + 1},
        ),
        get_extras=lambda s: {"chose_with": s["chose_with"]},
        on_episode_start=lambda s: {**s, "memory": jnp.zeros((), jnp.int32)},
    )
    adder = RecordingAdder()
    actor = GenericActor(counting_core, jax.random.PRNGKey(0), None, adder)
    _run_episodes(actor, episodes=3, length=4)
    chose_with = [int(call[3]["chose_with"]) for call in adder.calls if call[0] == "add"]
    assert chose_with == [0, 1, 2, 3] * 3  # the state that chose each action, restarted every episode
    assert int(actor.save()["lifetime"]) == 12

    # DQN's epsilon-greedy core keeps its exploration clock running across episodes.
    dqn_core = epsilon_greedy_core(_q_values, lambda steps: 0.0)
    client = VariableClient(FakeVariableSource(jnp.zeros(2)), "policy")
    dqn_actor = GenericActor(dqn_core, jax.random.PRNGKey(0), client, RecordingAdder())
    _run_episodes(dqn_actor, episodes=3, length=4)
    assert int(dqn_actor.save().steps) == 12
