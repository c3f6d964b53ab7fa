"""What runners read is declared, not guessed: how a checkpoint's replay sizes are read follows the replay client's
type (`LocalFormatReplay`), and a resumed run's `learner_state_steps` is the learner's `state_steps()`."""

from typing import NamedTuple

import jax.numpy as jnp

from acmelike import core
from acmelike.learners import SGDLearner
from acmelike.replay import LocalFormatReplay, LocalReplay, queue_table
from acmelike.replay.remote import RemoteReplay
from launch.lifecycle.checkpoints import replay_size_reader
from launch.lifecycle.replay_checkpoints import checkpoint_replay_sizes


class _OtherClient:
    """A client of another replay (a `reverb.Client`, say) that happens to have a `checkpoint_sizes` of its own."""

    def checkpoint(self) -> str:
        return ""

    @staticmethod
    def checkpoint_sizes(directory: str) -> dict:
        raise AssertionError("not a LocalFormatReplay: its checkpoints are read as Reverb's")


def test_the_local_replays_checkpoints_are_read_in_their_format_and_any_other_clients_as_reverbs(tmp_path):
    local = LocalReplay([queue_table(name="table", max_size=10, signature=None)], seed=0)
    remote = RemoteReplay(handle=None)
    assert isinstance(local, LocalFormatReplay) and isinstance(remote, LocalFormatReplay)
    local.save(str(tmp_path))
    for client in (local, remote):
        assert replay_size_reader(client)(str(tmp_path)) == {"table": 0}
    assert replay_size_reader(_OtherClient()) is checkpoint_replay_sizes
    assert replay_size_reader(None) is None


class _State(NamedTuple):
    w: jnp.ndarray
    steps: jnp.ndarray


def test_state_steps_is_the_training_states_count_where_it_declares_one():
    def learner(state):
        return SGDLearner(state=state, update_step=None, iterator=iter([]), variables={})

    assert learner(_State(jnp.zeros(()), jnp.array(7, jnp.int32))).state_steps() == 7
    assert learner({"a": _State(jnp.zeros(()), jnp.array(7))}).state_steps() is None  # no one count
    assert core.Learner.state_steps(None) is None  # every other learner's, unless it says otherwise
