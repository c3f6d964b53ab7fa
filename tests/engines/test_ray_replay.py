"""The replay node that serves the local replay's tables (acmelike/replay/remote.py), and the Ray engine running
on it (launch/engines/distributed/replay_node.py): today's stack, no Reverb.

The server's semantics are tested in this process (its methods called from threads, as a Ray actor's thread pool
calls them): rate limiting, blocking and unblocking, priorities, and the same items, samples and counts as a
`LocalReplay` under the same calls. The Ray tests (marked `alone`, like tests/engines/test_ray.py) share one Ray
instance per module: a writer killed mid-insert loses only its unfinished item; then DQN programs on Ray from the
command line (each starts Ray of its own): a short run whose actor is killed and restarted, resumed from its
checkpoint; and (long) DQN learning CartPole.
"""

import concurrent.futures
import json
import os
import shutil
import signal
import threading
import time
import warnings

import dm_env
import numpy as np
import pytest

from acmelike.adders.transition import NStepTransitionAdder
from acmelike.replay import LocalReplay, make_dataset_iterator
from acmelike.replay import tables as replay_tables
from acmelike.replay.remote import RemoteDataset, RemoteReplay, ReplayServer
from acmelike.specs import make_environment_spec
from acmelike.wrappers import make_gymnasium_environment
from program_launcher import Launcher, last_json_line
from stack import long_test, require_installed

TABLE = "t"


class ThreadHandle:
    """The engine's client of a server in this process: `handle.method(...)` and `handle.futures.method(...)`, each
    call on a pool thread, as a Ray actor with max_concurrency serves them."""

    def __init__(self, server):
        self._server = server
        self._pool = concurrent.futures.ThreadPoolExecutor(8)
        pool = self._pool

        class Futures:
            def __getattr__(self, method):
                return lambda *args: pool.submit(getattr(server, method), *args)

        self.futures = Futures()

    def __getattr__(self, method):
        if method.startswith("_"):
            raise AttributeError(method)
        return getattr(self._server, method)

    def close(self):
        self._server.close()
        self._pool.shutdown(wait=True)


@pytest.fixture
def served():
    """(server, RemoteReplay of it) for a list of TableSpecs; the server is closed (its waits end) at the end."""
    handles = []

    def serve(tables, seed=0):
        server = ReplayServer(tables, seed=seed)
        handles.append(ThreadHandle(server))
        return server, RemoteReplay(handles[-1])

    yield serve
    for handle in handles:
        handle.close()


def _item_signature():
    return {"x": replay_tables.ArraySpec((2,), np.float32)}


def _groups(values, priorities=None):
    """`ReplayServer.insert`'s groups for items {"x": [v, v]}."""
    import jax

    treedef = jax.tree_util.tree_structure({"x": 0})
    values = np.asarray(values, np.float32)
    priorities = np.ones(len(values)) if priorities is None else np.asarray(priorities, np.float64)
    return [(TABLE, treedef, priorities, [np.stack([values, values], axis=1)])]


def _limited_table(**limits):
    return replay_tables.uniform_table(name=TABLE, max_size=100, signature=_item_signature(),
                                       rate_limiter=replay_tables.sample_to_insert_ratio(**limits))


def _in_thread(function, *args):
    result = {}
    thread = threading.Thread(target=lambda: result.setdefault("value", function(*args)), daemon=True)
    thread.start()
    return thread, result


def test_a_sample_waits_for_data_and_an_insert_lets_it_go(served):
    server, _ = served([_limited_table(samples_per_insert=1.0, min_size_to_sample=2, error_buffer=10.0)])
    started = time.monotonic()
    assert server.sample(TABLE, 1, 0.2) is None and time.monotonic() - started >= 0.2  # empty: waits, then None
    thread, result = _in_thread(server.sample, TABLE, 2, 5.0)
    time.sleep(0.2)
    assert thread.is_alive()  # waiting for min_size_to_sample items
    assert server.insert(_groups([1.0, 2.0])) == 2
    thread.join(5.0)
    assert sorted(result["value"].data["x"][:, 0].tolist()) in ([1.0, 1.0], [1.0, 2.0], [2.0, 2.0])


def test_an_insert_waits_while_the_actors_are_too_far_ahead_and_samples_release_it(served):
    # min_diff = 2 - 2 = 0, max_diff = 2 + 2 = 4: past the first 2 items, an insert waits while inserts - samples > 4.
    server, _ = served([_limited_table(samples_per_insert=1.0, min_size_to_sample=2, error_buffer=2.0)])
    thread, result = _in_thread(server.insert, _groups([0, 1, 2, 3, 4, 5]))

    def held_at(size):  # the insert reaches `size` items (however loaded the machine) and stays there
        deadline = time.monotonic() + 30
        while server.server_info()[TABLE].current_size < size and time.monotonic() < deadline:
            time.sleep(0.02)
        time.sleep(0.3)
        return thread.is_alive() and server.server_info()[TABLE].current_size == size

    assert held_at(4)  # held back at the 5th item
    assert server.sample(TABLE, 1, 1.0) is not None  # one sample lets exactly one more item in
    assert held_at(5)
    assert server.sample(TABLE, 1, 1.0) is not None
    thread.join(5.0)
    assert result["value"] == 6 and server.server_info()[TABLE].current_size == 6
    # close() ends a held insert: it answers how many went in.
    thread, result = _in_thread(server.insert, _groups([6, 7]))
    time.sleep(0.2)
    server.close()
    thread.join(5.0)
    assert result["value"] == 0


def test_priorities_decide_what_is_sampled_and_mutations_arrive_in_order(served):
    table = replay_tables.prioritized_table(name=TABLE, max_size=10, priority_exponent=1.0,
                                            rate_limiter=replay_tables.min_size(1), signature=_item_signature())
    server, replay = served([table])
    assert server.insert(_groups([0.0, 1.0, 2.0], priorities=[0.0, 0.0, 1.0])) == 3
    first, _, last = server._replay.table(TABLE).state()[1]["key"].tolist()  # in insertion order
    assert set(server.sample(TABLE, 16, 1.0).info.key.tolist()) == {last}  # priority 0 is never sampled
    # Sent without waiting; a second update waits for the first, so they arrive in order and the last one wins.
    replay.mutate_priorities(TABLE, updates={last: 0.0, first: 1.0})
    replay.mutate_priorities(TABLE, updates={first: 0.0, last: 3.0})
    replay.mutate_priorities(TABLE, updates={last: 0.0, first: 2.0})
    replay._priority_update.result(5.0)
    sample = server.sample(TABLE, 16, 1.0)
    assert set(sample.info.key.tolist()) == {first} and set(sample.data["x"][:, 0].tolist()) == {0.0}
    assert np.allclose(sample.info.probability, 1.0)


def _cartpole_adder_calls():
    """An NStepTransitionAdder's signature and its calls for 6 CartPole-like episodes of fixed lengths."""
    spec = make_environment_spec(make_gymnasium_environment("CartPole-v1", 0))
    signature = NStepTransitionAdder.signature(spec)
    rng = np.random.default_rng(0)

    def drive(adder):
        for length in (5, 9, 3, 12, 7, 4):
            adder.add_first(dm_env.restart(rng.standard_normal(4).astype(np.float32)))
            for t in range(length):
                observation = rng.standard_normal(4).astype(np.float32)
                step = dm_env.termination(1.0, observation) if t == length - 1 else dm_env.transition(1.0, observation)
                adder.add(np.int64(t % 2), step)
        adder.close()

    return signature, drive


def test_the_same_calls_give_the_same_items_samples_and_counts_as_a_local_replay(served):
    signature, _ = _cartpole_adder_calls()
    table = replay_tables.uniform_table(name=TABLE, max_size=25, signature=signature,
                                        rate_limiter=replay_tables.min_size(4))
    local = LocalReplay([table], seed=3)
    server, remote = served([table], seed=3)
    for client in (local, remote):
        _, drive = _cartpole_adder_calls()  # the same episodes again
        drive(NStepTransitionAdder(client=client, table_names=TABLE, n_step=3, discount=0.9))
    local_samples = [local.table(TABLE).sample(8) for _ in range(5)]
    remote_samples = [server.sample(TABLE, 8, 1.0) for _ in range(5)]
    for ours, theirs in zip(local_samples, remote_samples):
        assert np.array_equal(ours.info.key, theirs.info.key)
        assert np.array_equal(ours.data.observation, theirs.data.observation)
    local_meta, local_arrays = local.table(TABLE).state()
    (remote_meta, remote_arrays), = [server._replay.table(TABLE).state()]
    assert local_meta["rate_limiter"] == remote_meta["rate_limiter"] == {"inserts": 40, "samples": 40, "deletes": 15}
    assert local_meta["size"] == remote_meta["size"] == 25
    assert all(np.array_equal(local_arrays[name], remote_arrays[name]) for name in local_arrays)
    # The learner's dataset over the remote replay: whole batches, one request ahead; close() lets a wait go.
    dataset = make_dataset_iterator(client=remote, table=TABLE, batch_size=8)
    assert isinstance(dataset, RemoteDataset) and dataset.samples_per_next == {TABLE: 8}
    assert next(dataset).data.observation.shape == (8, 4)
    dataset.close()
    with pytest.raises(StopIteration):
        next(dataset)


def test_checkpoint_and_restore_round_trip_in_the_local_replay_format(served, tmp_path):
    server, replay = served([_limited_table(samples_per_insert=1.0, min_size_to_sample=1, error_buffer=50.0)])
    server._staging_dir = str(tmp_path)
    server.insert(_groups([1.0, 2.0, 3.0]))
    path = replay.checkpoint()
    assert os.path.dirname(path) == str(tmp_path) and RemoteReplay.checkpoint_sizes(path) == {TABLE: 3}
    again, _ = served([_limited_table(samples_per_insert=1.0, min_size_to_sample=1, error_buffer=50.0)])
    again.restore(path)
    assert again.server_info()[TABLE].current_size == 3
    assert np.array_equal(again.sample(TABLE, 4, 1.0).info.key, server.sample(TABLE, 4, 1.0).info.key)


# Ray: one instance for the in-process tests below (the programs start Ray of their own, from the command line).


@pytest.fixture(scope="module")
def ray_here(tmp_path_factory):
    """Ray started as the engine starts it (loopback only, token authentication where Ray has it: set up before Ray
    is first imported, so not through `require`); this process's environment is put back afterwards."""
    require_installed("ray")
    from launch.engines.distributed import ray_engine

    environment = dict(os.environ)
    run_dir = str(tmp_path_factory.mktemp("ray"))
    with warnings.catch_warnings():  # that pytest's own in-process servers are not fenced: it starts none
        warnings.filterwarnings("ignore", message="this process was started without", category=RuntimeWarning)
        temp_dir, fallback = ray_engine._start_ray(ray_engine.RayOptions(), run_dir, None)
    import ray

    try:
        yield ray
    finally:
        ray.shutdown()
        if fallback:
            shutil.rmtree(temp_dir, ignore_errors=True)
        os.environ.clear()
        os.environ.update(environment)


class _ReplayHost:
    """A replay server in a Ray actor, its methods served as `ray_engine.NodeHost` serves a node's: `call`."""

    def __init__(self, tables):
        self._server = ReplayServer(tables, seed=0)

    def call(self, method, *args):
        return getattr(self._server, method)(*args)


class _Writer:
    """An actor's writer in a process of its own: `count` finished items, one unfinished, then waits on flush."""

    def __init__(self, host):
        from launch.engines.distributed.ray_engine import RayClient

        self._writer = RemoteReplay(RayClient(host)).trajectory_writer(num_keep_alive_refs=1)

    def write(self, count: int) -> str:
        for i in range(count):
            self._writer.append({"x": np.full(2, i, np.float32)})
            self._writer.create_item(TABLE, 1.0, {"x": self._writer.history["x"][-1]})
        self._writer.append({"x": np.full(2, -1.0, np.float32)})  # the unfinished item: no item references it yet
        self._writer.flush(0)  # sends all; held back by the rate limiter
        return "flushed"


@pytest.mark.alone
def test_a_writer_killed_mid_insert_loses_nothing_but_its_unfinished_item(ray_here):
    ray = ray_here
    # Inserts wait once inserts - samples > 4 (past the first 2 items): the writer's 10 items stop after 4.
    host = ray.remote(_ReplayHost).options(max_concurrency=8).remote(
        [_limited_table(samples_per_insert=1.0, min_size_to_sample=2, error_buffer=2.0)])
    writer = ray.remote(_Writer).remote(host)
    writing = writer.write.remote(10)

    def size():
        return ray.get(host.call.remote("server_info"))[TABLE].current_size

    deadline = time.monotonic() + 60
    while size() < 4 and time.monotonic() < deadline:
        time.sleep(0.1)
    time.sleep(0.5)
    assert size() == 4 and not ray.wait([writing], timeout=0)[0]  # held back mid-insert
    ray.kill(writer)  # its process dies (SIGKILL) while its insert waits on the server
    with pytest.raises(ray.exceptions.RayActorError):
        ray.get(writing, timeout=60)
    for _ in range(6):  # each sample lets one more item in
        assert ray.get(host.call.remote("sample", TABLE, 1, 5.0)) is not None
    deadline = time.monotonic() + 10
    while size() < 10 and time.monotonic() < deadline:
        time.sleep(0.1)
    assert size() == 10  # every finished item; the unfinished one is gone with its writer
    values = ray.get(host.call.remote("sample", TABLE, 4, 5.0)).data["x"][:, 0]  # as many as the limiter allows
    assert set(values.tolist()) <= set(range(10)) and -1.0 not in values
    ray.kill(host)


# DQN programs on Ray from the command line, with the local replay (the default, the only one on this stack).
SMALL_DQN = ("--config", "hidden_sizes=32,32", "--config", "min_replay_size=200", "--config", "batch_size=32",
             "--config", "epsilon_decay_steps=2000")


def _ray_command(*args):
    return ("--agent", "dqn", "--env", "CartPole-v1", "--launch", "ray", "--actors", 2, *args)


def _progress(run_dir) -> dict:
    try:
        return json.loads((run_dir / "progress.json").read_text())
    except (OSError, ValueError):
        return {}


def _placements(run_dir) -> dict:
    try:
        return json.loads((run_dir / "ray_nodes.json").read_text())
    except (OSError, ValueError):
        return {}


def _checkpoints(run_dir) -> list:
    directory = run_dir / "checkpoints"
    return sorted(path for path in directory.iterdir() if path.name.isdigit()) if directory.is_dir() else []


@pytest.mark.alone
def test_dqn_on_ray_restarts_a_killed_actor_and_resumes_after_kill_9(tmp_path, monkeypatch):
    """One program: learns (learner steps > 0), its actor_0 killed and restarted by Ray, then the whole program
    killed (SIGKILL to the launcher's process group, then to every process it started, as a crash takes all of
    them) once it has a checkpoint; `--resume` goes on from that checkpoint to a larger budget and ends there.

    Its processes see two CPU devices: the learner works on the first and the actors (restarted
    too) on the last, as `acmelike.placement` says (each host records its node's device in ray_nodes.json)."""
    # The device count goes first: XLA stops reading flags at a word that is not one (SINGLE_THREADED has one).
    monkeypatch.setenv("XLA_FLAGS", f"--xla_force_host_platform_device_count=2 {os.environ.get('XLA_FLAGS', '')}")
    run_dir = tmp_path / "run"
    first = Launcher(*_ray_command("--steps", 1_000_000, "--checkpoint-every", 0.05, "--progress-seconds", 1,
                                   *SMALL_DQN), run_dir=run_dir, command_line=True, own_process_group=True)
    try:
        first.wait_until(lambda: _progress(run_dir).get("actor_steps", 0) >= 300 and "actor_0" in _placements(run_dir),
                         400, "300 actor steps")
        os.kill(_placements(run_dir)["actor_0"]["pid"], signal.SIGKILL)
        first.wait_until(lambda: _placements(run_dir).get("actor_0", {}).get("restarts") == 1
                         and _progress(run_dir).get("learner_steps", 0) > 0
                         and _checkpoints(run_dir) and int(_checkpoints(run_dir)[-1].name) > 300, 300,
                         "actor_0's restart, learner steps and a checkpoint")
    finally:
        first._record()
        first.signal_group(signal.SIGKILL)
        first.process.wait()
        first.kill()  # Ray's daemons and workers, as a crash of the machine would
    assert first.left_behind() == []
    devices = {name: where["device"] for name, where in _placements(run_dir).items()}
    assert devices["learner"] == "cpu:0" and devices["actor_0"] == devices["actor_1"] == "cpu:1", devices
    checkpoint = _checkpoints(run_dir)[-1]
    metadata = json.loads((checkpoint / "metadata.json").read_text())
    assert metadata["replay_sizes"]["priority_table"] > 0 and (checkpoint / "replay" / "local_replay.json").exists()
    budget = int(checkpoint.name) + 600
    resumed = Launcher("--resume", run_dir, "--steps", budget, run_dir=run_dir, command_line=True)
    assert resumed.wait(timeout=400) == 0, resumed.output[-5000:]
    restored = json.loads((run_dir / "resumed.json").read_text())
    assert restored["step"] == metadata["step"] and restored["replay_sizes"] == metadata["replay_sizes"]
    assert restored["learner_state_steps"] > 0
    summary = last_json_line(resumed.output)
    assert summary["launch"] == "ray" and summary["interrupted"] is False and summary["env_steps"] >= budget
    assert summary["learner_steps"] > restored["counts"]["learner_steps"], summary
    assert json.loads((run_dir / "config.json").read_text())["replay"] == "local"
    assert resumed.left_behind() == []


@long_test
@pytest.mark.alone
def test_dqn_with_the_local_replay_learns_cartpole_on_ray(tmp_path):
    budget = 100_000
    launcher = Launcher(*_ray_command("--steps", budget, "--eval-every", 5_000, "--stop-at-return", 400),
                        run_dir=tmp_path, command_line=True)
    assert launcher.wait(timeout=900) == 0, launcher.output[-5000:]
    summary = last_json_line(launcher.output)
    assert summary["average_evaluator_return"] >= 400 and summary["env_steps"] <= budget + 5_000, summary
    assert launcher.left_behind() == []
