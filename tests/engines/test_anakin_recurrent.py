"""Anakin's recurrent forms (IMPALA, R2D2): the sequence replay holds a CONTINUE SequenceAdder's windows, sampled
uniformly or by priority; each environment's actor fetches parameters every `variable_update_period` of its
actions; and both agents learn gymnax's bsuite MemoryChain, which no feed-forward agent can.

MemoryChain-bsuite (memory_length 5): the context bit (+-1) is seen in the first two observations only, and the
sixth action is rewarded +1 if it names the bit, -1 otherwise. A policy without memory averages 0 whatever it
learns. Measured by hand over the tests' budget (20k rows, seed 0, 100-episode average): IMPALA and R2D2 with the
LSTM state reset at every step, acting and learning (`acmelike.networks.recurrent.reset_where` patched to always
reset), ended at 0.00 and 0.08 after 17.1k environment steps; feed-forward PPO at -0.06 after 17.1k and
feed-forward DQN at 0.10 after 20k. IMPALA and R2D2 as they are pass 0.8 within 1.2k-2.1k steps (seeds 0-3).
"""

import csv
import types

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from stack import require

require("gymnax")

from acmelike.actors.actor_core import ActorCore  # noqa: E402
from acmelike.anakin import StepStream, TrajectoryBuffer, make_gymnax_environment  # noqa: E402
from acmelike.anakin.recurrent_replay import SequenceReplay, sgd_steps_and_inserts  # noqa: E402
from agents.impala import IMPALAConfig  # noqa: E402
from agents.impala.anakin import make_anakin_agent as make_impala_form  # noqa: E402
from agents.r2d2 import R2D2Config  # noqa: E402
from agents.r2d2.anakin import make_anakin_agent as make_r2d2_form  # noqa: E402
from launch.engines.anakin import AnakinConfig, run_anakin  # noqa: E402

MEMORY_CHAIN = "gymnax/MemoryChain-bsuite"
THRESHOLD = 0.8  # averaged over 100 episodes; a memoryless policy's average is 0 (standard deviation 0.1)


def _replay(priority_exponent=0.0, batch_size=4096):
    """Sequences of 7 rows every 3 rows of 2 streams, 2 held per stream, sampling once 3 are held."""
    config = types.SimpleNamespace(sequence_length=7, sequence_period=3, max_replay_size=4, min_replay_size=3,
                                   batch_size=batch_size, priority_exponent=priority_exponent)
    return SequenceReplay.from_config(config, num_envs=2, rows_per_env=3)


def _add_rows(replay, state, first, count):
    """Rows `first .. first + count - 1` of both streams, each row's observation 100 * env + its row number."""
    value = (100 * jnp.arange(2)[:, None] + jnp.arange(first, first + count)[None, :]).astype(jnp.float32)
    return replay.add(state, {"observation": value})


def _starts(sample):
    """The first row of each sampled sequence, after checking that every sequence is 7 consecutive rows."""
    rows = np.asarray(sample.data["observation"])
    np.testing.assert_array_equal(rows - rows[:, :1], np.broadcast_to(np.arange(7), rows.shape))
    return rows[:, 0].astype(int)


def test_sequence_replay_holds_the_newest_whole_windows_of_each_stream():
    """The adder's windows [3k, 3k + 7) of each stream, the newest max_replay_size / num_envs = 2 whole ones."""
    replay = _replay()
    state = replay.init({"observation": jnp.zeros((), jnp.float32)})
    sample_of = jax.jit(replay.sample)
    expected = {6: [], 9: [0], 12: [0, 3], 15: [3, 6], 30: [18, 21]}  # rows written -> starts held per stream
    written = 0
    for rows, starts in expected.items():
        while written < rows:
            state = _add_rows(replay, state, written, 3)
            written += 3
        assert int(replay.size(state)) == 2 * len(starts)
        assert bool(replay.can_sample(state)) == (2 * len(starts) >= 3)
        if starts:
            sample, _ = sample_of(state, jax.random.PRNGKey(rows))
            assert set(_starts(sample)) == set(starts) | {100 + s for s in starts}
            np.testing.assert_allclose(sample.info.probability, 1 / (2 * len(starts)))


def test_sequence_priorities_are_written_back_and_reset_for_new_sequences():
    replay = _replay(priority_exponent=0.5)
    state = replay.init({"observation": jnp.zeros((), jnp.float32)})
    for first in range(0, 12, 3):
        state = _add_rows(replay, state, first, 3)
    sample, where = replay.sample(state, jax.random.PRNGKey(0))
    starts = _starts(sample)
    assert set(starts) == {0, 3, 100, 103}  # new sequences at priority 1.0: all equally likely
    # P(i) = p_i^0.5 / sum p^0.5; priority 0 is never sampled.
    priorities = jnp.zeros(starts.shape).at[starts == 3].set(16.0).at[starts == 100].set(4.0)
    state = replay.set_priorities(state, where, priorities)
    sample, where = replay.sample(state, jax.random.PRNGKey(1))
    starts = _starts(sample)
    counts = {start: np.mean(starts == start) for start in np.unique(starts)}
    assert set(counts) == {3, 100}, counts
    np.testing.assert_allclose([counts[3], counts[100]], [4 / 6, 2 / 6], atol=0.03)
    # Three more rows: the sequence at 6 is whole (priority 1.0, the adder's), the one at 0 leaves.
    state = replay.set_priorities(state, where, jnp.zeros(starts.shape))  # 3 and 100 at 0 too
    state = _add_rows(replay, state, 12, 3)
    assert set(_starts(replay.sample(state, jax.random.PRNGKey(2))[0])) == {6, 106}


def test_fields_the_recurrent_forms_cannot_hold_are_refused_by_name():
    assert sgd_steps_and_inserts(R2D2Config()) == (1, 4)  # 32 samples per SGD step / 8 per insert
    assert sgd_steps_and_inserts(R2D2Config(batch_size=4)) == (2, 1)  # 2 SGD steps per sequence inserted
    environment = make_gymnax_environment(MEMORY_CHAIN)
    with pytest.raises(ValueError, match="samples_per_insert"):
        make_r2d2_form(environment, R2D2Config(samples_per_insert=8.3))
    with pytest.raises(ValueError, match="max_replay_size=10000"):
        make_r2d2_form(environment, R2D2Config(max_replay_size=10_001))
    with pytest.raises(ValueError, match="choose a divisor of 4"):
        make_r2d2_form(environment, R2D2Config(), num_envs=3)
    with pytest.raises(ValueError, match="variable_update_period=2"):  # IMPALA's actors never lag its learner
        make_impala_form(environment, IMPALAConfig(variable_update_period=2))


def test_each_environments_actor_fetches_parameters_every_variable_update_period_actions():
    """MemoryChain's episodes are 6 actions and a padding row (which takes no action): with a period of 4, an
    environment acts with the learner's parameters of its actions 0, 4, 8, ... whatever the rows between."""
    environment = make_gymnax_environment(MEMORY_CHAIN)
    # A policy whose action is its parameters: the rows show which copy acted.
    policy = ActorCore(init=lambda key: key, select_action=lambda params, observation, state: (params, state),
                       get_extras=lambda state: ())
    stream = StepStream(environment, policy, variable_update_period=4)
    state = stream.init(jax.random.PRNGKey(0), 2, jnp.zeros((), jnp.int32))
    unroll = jax.jit(stream.unroll, static_argnums=3)
    actions, real = [], []
    for iteration in range(1, 4):  # the learner's parameters are `iteration` during its 5 rows
        state, rows, outputs = unroll(jnp.asarray(iteration, jnp.int32), state, jax.random.PRNGKey(iteration), 5)
        actions.extend(np.asarray(rows.action[0]).tolist())
        real.extend(np.asarray(outputs.real[:, 0]).tolist())
    assert real == [True] * 6 + [False] + [True] * 6 + [False] + [True]  # 15 rows: 13 actions
    acted = [action for action, is_real in zip(actions, real) if is_real]
    # Actions 0-3 with iteration 1's (fetched at row 0), 4-7 with iteration 1's (fetched at row 4), 8-11 with
    # iteration 2's (fetched at row 9, the second iteration's last), 12 with iteration 3's (row 14).
    assert acted == [1] * 8 + [2] * 4 + [3]


def _learn_memory_chain(agent, steps, run_dir=None):
    return run_anakin(AnakinConfig(
        agent=agent, environment=MEMORY_CHAIN, max_num_actor_steps=steps, seeds=(0,), agent_config=None,
        target_return=THRESHOLD, return_window=100, stop_at_average_return=THRESHOLD, iterations_per_call=25,
        progress_period_s=0, run_dir=run_dir,
    ))


def test_impala_learns_the_memory_chain_fully_jitted_acting_exactly_as_it_learns(tmp_path):
    """Default config. Each update learns from rows acted with its own parameters, and the learner's unroll (from
    each sequence's stored LSTM state, reset at episode starts) gives the actors' logits back: KL(mu || pi) is 0
    to rounding. An actor whose LSTM state were not carried from row to row, or not reset where the learner resets
    it, would act from other logits."""
    summary = _learn_memory_chain("impala", 20_000, run_dir=str(tmp_path))
    assert summary["average_return_last_100"] >= THRESHOLD, summary
    with open(tmp_path / "learner.csv") as f:
        kl = [float(row["behaviour_kl"]) for row in csv.DictReader(f)]
    assert kl and max(abs(value) for value in kl) < 1e-5, kl


def test_r2d2_learns_the_memory_chain_fully_jitted():
    summary = _learn_memory_chain("r2d2", 20_000)
    assert summary["average_return_last_100"] >= THRESHOLD, summary
