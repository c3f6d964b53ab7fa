"""The learner shell: several SGD steps per call, NaN losses, variables by name."""

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from acmelike.learners import NonFiniteLossError, SGDLearner, scan_update_steps


class State(NamedTuple):
    w: jax.Array
    steps: jax.Array


def _update_step(state, batch):
    # Moves w toward the batch mean; loss is the squared distance. Extras echo the batch per item.
    loss = jnp.mean((batch - state.w) ** 2)
    w = state.w + 0.5 * (jnp.mean(batch) - state.w)
    return State(w=w, steps=state.steps + 1), {"loss": loss}, {"echo": batch * 2}


def _state():
    return State(w=jnp.zeros(()), steps=jnp.zeros((), jnp.int32))


def test_scan_update_steps_runs_each_slice_in_order():
    multi = jax.jit(scan_update_steps(_update_step, 3))
    batch = jnp.array([4.0, 4.0, 0.0, 0.0, 8.0, 8.0])
    state, metrics, extras = multi(_state(), batch)
    # w: 0 -> 2 -> 1 -> 4.5 ; three steps
    np.testing.assert_allclose(state.w, 4.5)
    assert int(state.steps) == 3
    assert metrics["loss"].shape == (3,)
    np.testing.assert_allclose(extras["echo"], batch * 2)  # aligned with the big batch's items


def test_learner_steps_serves_variables_and_calls_after_update():
    seen = []
    learner = SGDLearner(
        state=_state(),
        update_step=_update_step,
        iterator=iter([jnp.array([2.0, 2.0])] * 3),
        variables={"policy": lambda s: s.w},
        num_sgd_steps_per_step=2,
        after_update=lambda batch, extras: seen.append(np.asarray(extras["echo"])),
    )
    learner.step()
    assert int(learner.state.steps) == 2
    np.testing.assert_allclose(learner.get_variables(["policy"])[0], 1.5)
    assert seen == []  # the call is still in flight: finished on the host by the next step (or wait())
    learner.wait()
    np.testing.assert_allclose(seen[0], [4.0, 4.0])
    with pytest.raises(KeyError, match="unknown"):
        learner.get_variables(["critic"])


def test_nan_loss_raises_naming_step_and_loss_and_keeps_last_good_state():
    batches = iter([jnp.array([1.0]), jnp.array([jnp.nan]), jnp.array([1.0])])
    learner = SGDLearner(state=_state(), update_step=_update_step, iterator=batches, variables={}, name="test learner")
    learner.step()
    good = float(learner.state.w)
    learner.step()  # NaN loss: guarded on the device, reported when the host finishes this call
    assert float(learner.state.w) == good and int(learner.state.steps) == 1  # the bad update was not applied
    with pytest.raises(NonFiniteLossError, match=r"test learner: loss 'loss' is nan at SGD step 2"):
        learner.step()


def test_nan_loss_is_reported_by_wait_and_save():
    learner = SGDLearner(state=_state(), update_step=_update_step, iterator=iter([jnp.array([jnp.inf])]), variables={})
    learner.step()
    with pytest.raises(NonFiniteLossError, match="is (nan|inf) at SGD step 1"):
        learner.save()
    assert float(learner.state.w) == 0.0


def test_save_restore_round_trip():
    learner = SGDLearner(state=_state(), update_step=_update_step, iterator=iter([jnp.ones(1)]), variables={})
    saved = learner.save()
    learner.step()
    learner.restore(saved)
    assert int(learner.state.steps) == 0
