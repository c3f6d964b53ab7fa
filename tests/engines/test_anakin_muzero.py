"""MuZero's fully jitted form (`agents/muzero/anakin.py`): the mctx search acts inside the jitted loop and the
agent's own update learns from the on-device sequence replay; it learns gymnax CartPole, fits MinAtar Breakout's
frames, and refuses what it cannot hold, naming the field."""

import warnings

import jax
import pytest
from stack import require

require("gymnax")

from acmelike.anakin import make_gymnax_environment  # noqa: E402
from agents.muzero import MuZeroConfig  # noqa: E402
from agents.muzero.anakin import make_anakin_agent  # noqa: E402
from launch.engines.anakin import AnakinConfig, run_anakin  # noqa: E402
from launch.experiments.make import make_agent_config  # noqa: E402

# 4 simulations (Gumbel MuZero improves the policy with few: agents/muzero/README.md) and one SGD step of 64
# sequences per 4 inserted (4 environments, one row each per iteration); every other field is the default.
FAST = ["num_simulations=4", "samples_per_insert=16"]
# Seeds 0-4 at this budget ended at 339.5, 117.2, 135.8, 351.9 and 444.7 (2026-11-29), so 200 was a coin flip per
# seed; every one passed 100 by about 14k steps. Learning rate 1e-9 (a learner that does not learn) reaches 22.9.
CARTPOLE_THRESHOLD = 100.0


def test_muzero_learns_cartpole_fully_jitted():
    summary = run_anakin(AnakinConfig(
        agent="muzero", environment="gymnax/CartPole-v1", max_num_actor_steps=4 * 256 * 20, seeds=(0,),
        agent_config=make_agent_config("muzero", FAST), stop_at_average_return=CARTPOLE_THRESHOLD,
        iterations_per_call=256, progress_period_s=0,  # 20 whole calls: no skip branch to compile
    ))
    assert summary["average_return_last_20"] >= CARTPOLE_THRESHOLD, summary


def test_the_form_reads_minatar_breakout_frames_flattened():
    """gymnax's Breakout-MinAtar observes 10x10x4 frames: the MLPs read them flattened, and the replay stores them
    whole beside the search's policy over the 3 actions (shapes only: nothing compiles). gymnax's writes of ints
    into its bool frames do not warn (`acmelike.anakin.environment`)."""
    agent = make_anakin_agent(make_gymnax_environment("gymnax/Breakout-MinAtar"), MuZeroConfig())
    with warnings.catch_warnings():
        warnings.simplefilter("error", FutureWarning)
        _, _, replay_state, _ = jax.eval_shape(agent.init, jax.random.PRNGKey(0))
    rows = replay_state.buffer.experience
    assert rows.observation.shape[2:] == (10, 10, 4)
    assert rows.extras["action_weights"].shape[2:] == (3,) and rows.extras["root_value"].shape[2:] == ()
    assert (agent.num_envs, agent.rows_per_env) == (2, 1)  # one SGD step of 64 per 2 sequences (32 per insert)


@pytest.mark.parametrize("fields, num_envs, message", [
    (dict(samples_per_insert=64.7), None, "samples_per_insert"),  # no whole SGD steps and sequences
    (dict(), 3, "divisor of 2"),
    (dict(max_replay_size=1001), 2, "max_replay_size"),
])
def test_what_the_form_cannot_hold_is_refused_by_name(fields, num_envs, message):
    with pytest.raises(ValueError, match=message):
        make_anakin_agent(make_gymnax_environment("gymnax/CartPole-v1"), MuZeroConfig(**fields), num_envs=num_envs)
