"""Anakin's off-policy replay (`acmelike.anakin.off_policy`): prioritized sampling as Reverb's, the actors' copy of
the parameters fetched every `variable_update_period` steps, the samples-per-insert ratio held or refused, and
SAC and TD3 (D4PG and MPO: long tests) learning gymnax Pendulum fully jitted."""

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from stack import long_test, require

require("gymnax")

from acmelike.actors.actor_core import ActorCore  # noqa: E402
from acmelike.anakin import StepRecord, TrajectoryBuffer, TransitionRecorder, make_gymnax_environment  # noqa: E402
from acmelike.anakin.agent import SEEDS_AXIS  # noqa: E402
from acmelike.anakin.off_policy import TransitionReplay, inserts_per_iteration, sample_in_proportion  # noqa: E402
from agents.dqn import DQNConfig  # noqa: E402
from agents.dqn.anakin import make_anakin_agent as make_dqn_form  # noqa: E402
from agents.sac import SACConfig  # noqa: E402
from agents.sac.anakin import make_anakin_agent as make_sac_form  # noqa: E402
from agents.td3 import TD3Config  # noqa: E402
from agents.td3.anakin import make_anakin_agent as make_td3_form  # noqa: E402
from launch.engines.anakin import AnakinConfig, run_anakin  # noqa: E402
from launch.experiments.make import make_agent_config  # noqa: E402

PENDULUM = "gymnax/Pendulum-v1"


def _filled_replay(priority_exponent: float):
    """A prioritized replay of 2 environments x 6 steps holding 5 steps each, records numbered 10 * env + time."""
    buffer = TrajectoryBuffer(max_length=6, num_envs=2, sequence_length=2, min_length=2)
    replay = TransitionReplay(buffer, discount=1.0, batch_size=4096, priority_exponent=priority_exponent)
    def records(times):
        value = (10 * jnp.arange(2)[:, None] + jnp.asarray(times)[None, :]).astype(jnp.float32)
        return StepRecord(observation=value[..., None], action=jnp.zeros_like(value), reward=value,
                          discount=jnp.ones_like(value), last=jnp.zeros(value.shape, bool),
                          next_observation=value[..., None] + 1)

    example = jax.tree_util.tree_map(lambda x: x[0, 0], records([0]))
    return replay, replay.add(replay.init(example), records(np.arange(5)))


def test_prioritized_sampling_follows_priorities_to_the_exponent_over_whole_transitions():
    replay, state = _filled_replay(priority_exponent=0.5)
    sample_of = jax.jit(replay.sample)
    # Steps 0..4 are held; 2-step transitions start at 0..3 (the one at 4 is not whole yet).
    sample, where = sample_of(state, jax.random.PRNGKey(0))
    starts = np.asarray(sample.data.observation[:, 0])
    assert set(np.unique(starts)) == {0, 1, 2, 3, 10, 11, 12, 13}  # new transitions: priority 1.0, all equal
    np.testing.assert_allclose(sample.info.probability, 1 / 8)
    # Priorities written back reshape the distribution: P(i) = p_i^0.5 / sum p^0.5; priority 0 is never sampled.
    priorities = jnp.zeros(4096).at[jnp.asarray(starts) == 2].set(16.0).at[jnp.asarray(starts) == 11].set(4.0)
    state = replay.set_priorities(state, where, priorities)
    sample, _ = sample_of(state, jax.random.PRNGKey(1))
    starts = np.asarray(sample.data.observation[:, 0])
    counts = {start: np.mean(starts == start) for start in np.unique(starts)}
    assert set(counts) == {2, 11}, counts
    np.testing.assert_allclose([counts[2], counts[11]], [4 / 6, 2 / 6], atol=0.03)
    np.testing.assert_allclose(np.asarray(sample.info.probability)[starts == 2], 4 / 6, rtol=1e-5)


def test_a_draw_never_lands_on_an_item_of_weight_zero():
    """XLA's float32 cumsum is not monotone, so zero weights own slivers of the running total: the old sampler drew 8
    of 1M on such items, reported at probability 0 (an infinite importance weight: MuZero's NaN on Breakout). Every
    draw is a positive weight, reported at its own probability."""
    rng = np.random.default_rng(0)
    weights = rng.random(100_000).astype(np.float32) ** 3
    weights[rng.random(100_000) < 0.2] = 0.0
    flat, info = jax.jit(sample_in_proportion, static_argnums=3)(
        jax.random.PRNGKey(0), jnp.asarray(weights), jnp.ones(weights.shape, bool), 1_000_000)
    assert np.all(weights[np.asarray(flat)] > 0)
    np.testing.assert_allclose(info.probability, weights[np.asarray(flat)] / weights.sum(dtype=np.float64), rtol=1e-3)


def test_draws_follow_the_weights_of_a_table_cut_into_padded_blocks():
    """997 items (prime: the last block is padded) drawn 400k times in proportion to their weights, a held mask
    leaving some out: every item's count within 5 standard deviations of its expectation, none outside the mask."""
    rng = np.random.default_rng(1)
    weights = rng.random(997).astype(np.float32)
    held = rng.random(997) < 0.7
    flat, info = jax.jit(sample_in_proportion, static_argnums=3)(
        jax.random.PRNGKey(3), jnp.asarray(weights), jnp.asarray(held), 400_000)
    counts = np.bincount(np.asarray(flat), minlength=997)
    expected = 400_000 * np.where(held, weights, 0.0) / np.sum(weights[held], dtype=np.float64)
    assert np.all(counts[~held] == 0)
    assert np.all(np.abs(counts - expected) <= 5 * np.sqrt(expected) + 1), np.max(np.abs(counts - expected))
    assert float(info.table_size[0]) == held.sum()


def test_every_weight_zero_draws_the_held_items_alike():
    held = np.zeros((250, 4), bool)
    held[40:90] = True
    flat, info = jax.jit(sample_in_proportion, static_argnums=3)(
        jax.random.PRNGKey(0), jnp.zeros((250, 4)), jnp.asarray(held), 200_000)
    counts = np.bincount(np.asarray(flat), minlength=1000)
    assert np.all(counts[~held.reshape(-1)] == 0)
    np.testing.assert_allclose(counts[held.reshape(-1)], 1000, rtol=0.15)
    np.testing.assert_allclose(info.probability, 1 / 200, rtol=1e-6)


def test_uniform_replay_keeps_no_priorities():
    replay, state = _filled_replay(priority_exponent=0.0)
    sample, where = replay.sample(state, jax.random.PRNGKey(0))
    assert where is None and replay.set_priorities(state, where, jnp.zeros(4096)) is state
    assert set(np.unique(np.asarray(sample.data.observation[:, 0]))) == {0, 1, 2, 3, 10, 11, 12, 13}


def test_actors_fetch_the_learners_parameters_every_variable_update_period_steps():
    environment = make_gymnax_environment(PENDULUM)
    # A policy whose action is its parameters: the records show which copy acted.
    policy = ActorCore(init=lambda key: key, select_action=lambda params, observation, state: (params, state),
                       get_extras=lambda state: ())
    recorder = TransitionRecorder(environment, policy, variable_update_period=3)
    state = recorder.init(jax.random.PRNGKey(0), 2, jnp.zeros((1,)))
    actions = []
    for iteration in range(1, 4):  # the learner's parameters are `iteration` during iteration's 2 steps
        state, records, _ = recorder.unroll(jnp.full((1,), float(iteration)), state, jax.random.PRNGKey(iteration), 2)
        actions.extend(np.asarray(records.action[0, :, 0]).tolist())
    # Fetches at steps 0 and 3 (of each environment): steps 0-2 act with iteration 1's, 3-5 with iteration 2's.
    assert actions == [1.0, 1.0, 1.0, 2.0, 2.0, 2.0]


def test_a_samples_per_insert_that_whole_rows_cannot_hold_is_refused():
    assert inserts_per_iteration(DQNConfig()) == 32  # 8 SGD steps of 64 at 16 samples per insert
    with pytest.raises(ValueError, match="samples_per_insert"):
        inserts_per_iteration(DQNConfig(samples_per_insert=24.0))
    with pytest.raises(ValueError, match="divisor of 8"):  # SAC's defaults insert 8 transitions per iteration
        make_sac_form(make_gymnax_environment(PENDULUM), SACConfig(), num_envs=3)


def _conds(jaxpr, path=()):
    """(the primitives enclosing it, dot_generals in each branch) of every `cond` in `jaxpr`, nested ones too. A
    nested jit is left out of the path: XLA inlines it (the learning branch is one, traced once for its shapes)."""
    def inner(eqn):
        for value in eqn.params.values():
            for item in value if isinstance(value, (tuple, list)) else (value,):
                if hasattr(item, "eqns") or hasattr(getattr(item, "jaxpr", None), "eqns"):
                    yield getattr(item, "jaxpr", item)

    def dots(jaxpr):
        return sum((eqn.primitive.name == "dot_general") + sum(dots(j) for j in inner(eqn)) for eqn in jaxpr.eqns)

    for eqn in jaxpr.eqns:
        if eqn.primitive.name == "cond":
            yield path, [dots(branch.jaxpr) for branch in eqn.params["branches"]]
        for sub in inner(eqn):
            yield from _conds(sub, path + ((eqn.primitive.name,) if eqn.primitive.name not in ("jit", "pjit") else ()))


def test_td3_fully_jitted_keeps_its_delayed_policy_update_a_branch_across_seeds():
    # Decided per seed, the policy-delay `lax.cond` becomes a select under the seeds vmap: the policy update is
    # computed every SGD step (and applied one in policy_delay). Decided once for every seed, it stays a branch
    # inside the SGD steps' scan, one arm of which computes nothing.
    config = TD3Config(policy_hidden_sizes=(8,), critic_hidden_sizes=(8,), batch_size=4, samples_per_insert=4.0,
                       num_sgd_steps_per_step=2, min_replay_size=4)
    agent = make_td3_form(make_gymnax_environment(PENDULUM), config)
    carries = jax.eval_shape(jax.vmap(agent.init), jax.random.split(jax.random.PRNGKey(0), 2))
    jaxpr = jax.make_jaxpr(jax.vmap(agent.iteration, axis_name=SEEDS_AXIS))(carries).jaxpr
    in_sgd_steps = [dots for path, dots in _conds(jaxpr) if path[:2] == ("cond", "scan")]
    assert len(in_sgd_steps) == 1 and min(in_sgd_steps[0]) == 0 < max(in_sgd_steps[0]), list(_conds(jaxpr))


@pytest.mark.parametrize("name, environment", [("dqn", "gymnax/CartPole-v1"), ("r2d2", "gymnax/MemoryChain-bsuite")])
def test_a_chunk_traces_the_iteration_the_learning_and_the_policy_once(name, environment, monkeypatch):
    # Tracing is much of a form's compile time on CPU. The skip branch's and the wait branch's shapes come from the
    # trace their other branch reuses, and `init` takes a row's shapes from the recorder's cached trace (DQN) or
    # without the policy (R2D2). Traced again each, they made R2D2's runner trace its update 4 times and its
    # policy 3 times.
    from acmelike.anakin import off_policy, recurrent_replay
    from acmelike.anakin.streams import StepStream
    from launch.engines.anakin import make_agent, make_chunk, make_init

    calls = {"iteration": 0, "learning": 0, "policy": 0}

    def counted(part, fn):
        def traced(*args, **kwargs):
            calls[part] += 1
            return fn(*args, **kwargs)
        return traced

    for module in (off_policy, recurrent_replay):
        monkeypatch.setattr(module, "sgd_steps", counted("learning", module.sgd_steps))
    monkeypatch.setattr(TransitionRecorder, "_record", counted("policy", TransitionRecorder._record))
    monkeypatch.setattr(StepStream, "write_row", counted("policy", StepStream.write_row))
    agent = make_agent(AnakinConfig(agent=name, environment=environment, max_num_actor_steps=1000))
    agent = dataclasses.replace(agent, iteration=counted("iteration", agent.iteration))
    carries = jax.eval_shape(make_init(agent), jnp.stack([jax.random.PRNGKey(0)]))
    make_chunk(agent, 4).lower(carries, 4)
    assert calls == {"iteration": 1, "learning": 1, "policy": 1}


def test_dqn_fully_jitted_copies_its_target_network_in_a_branch_across_seeds():
    # The same for the target network's copy every target_update_period steps (R2D2's, MuZero's and CQL's too:
    # acmelike.learners.periodic): decided per seed, it becomes a select that copies the target every SGD step.
    config = DQNConfig(hidden_sizes=(8,), batch_size=4, samples_per_insert=2.0, num_sgd_steps_per_step=2,
                       min_replay_size=4)
    agent = make_dqn_form(make_gymnax_environment("gymnax/CartPole-v1"), config)
    carries = jax.eval_shape(jax.vmap(agent.init), jax.random.split(jax.random.PRNGKey(0), 2))
    jaxpr = jax.make_jaxpr(jax.vmap(agent.iteration, axis_name=SEEDS_AXIS))(carries).jaxpr
    assert [dots for path, dots in _conds(jaxpr) if path[:2] == ("cond", "scan")] == [[0, 0]], list(_conds(jaxpr))


# Small networks and batches of 64 at one SGD step per environment step (8 environments): Pendulum in 10k-16k steps.
FAST = ["policy_hidden_sizes=64,64", "critic_hidden_sizes=64,64", "batch_size=64", "samples_per_insert=64"]
PENDULUM_THRESHOLD = -250.0


# D4PG (10k steps, 32 s on the loaded 2-core VM) and MPO (16k, 50 s) learn too; CI's time goes to SAC and TD3.
@pytest.mark.parametrize("agent", ["sac", "td3", pytest.param("mpo", marks=long_test)])
def test_continuous_agents_learn_pendulum_fully_jitted(agent):
    summary = run_anakin(AnakinConfig(
        agent=agent, environment=PENDULUM, max_num_actor_steps=32 * 128 * 8, seeds=(0,),  # whole calls: no skip branch
        agent_config=make_agent_config(agent, FAST), stop_at_average_return=PENDULUM_THRESHOLD,
        iterations_per_call=128, progress_period_s=0,
    ))
    assert summary["average_return_last_20"] >= PENDULUM_THRESHOLD, summary


# D4PG's tanh policy can stick at its bounds (about 1 seed in 30 with its near-zero last layer; the jax suite's
# notes), so one seed says little: three seeds in one vmapped call, and every one must reach the threshold.
@long_test
def test_d4pg_learns_pendulum_fully_jitted_on_every_seed_of_a_sweep():
    summary = run_anakin(AnakinConfig(
        agent="d4pg", environment=PENDULUM, max_num_actor_steps=32 * 128 * 8, seeds=(0, 1, 2),
        agent_config=make_agent_config("d4pg", FAST), stop_at_average_return=PENDULUM_THRESHOLD,
        iterations_per_call=128, progress_period_s=0,
    ))
    assert [seed["average_return_last_20"] >= PENDULUM_THRESHOLD for seed in summary["seeds"]] == [True] * 3, summary
