"""Central inference (`--inference central`) in the distributed program: the inference node serves the actions
local inference chooses, a failing actor still stops the program and is named, and a program learns with it."""

import concurrent.futures
import json
import threading

import jax
import numpy as np
import pytest
from program_launcher import Launcher, line_after
from stack import long_test, require

pytestmark = pytest.mark.classic
require("launchpad")

NETWORK = {"dqn": "q_network", "r2d2": "network"}  # the policy network each agent's `networks` holds


class _EngineClient:
    """A stand-in for an engine's client of a node in this process: `client.futures.method(...)` runs the method
    on a thread pool, as courier and Ray clients run calls concurrently."""

    def __init__(self, target, pool):
        self.futures = self
        self._target, self._pool = target, pool

    def __getattr__(self, method):
        return lambda *args: self._pool.submit(getattr(self._target, method), *args)


class _Learner:
    def __init__(self, params):
        self._params = params

    def get_variables(self, names):
        return [jax.device_get(self._params) for _ in names]


def _actions(actor, environment, steps):
    """Every action `actor` chooses over `steps` steps of `environment` (episodes restart as the loop would)."""
    timestep = environment.reset()
    actor.observe_first(timestep)
    actions = []
    for _ in range(steps):
        action = actor.select_action(timestep.observation)
        actions.append(np.asarray(action).copy())
        timestep = environment.step(action)
        actor.observe(action, timestep)
        if np.ndim(timestep.step_type) == 0 and timestep.last():
            timestep = environment.reset()
            actor.observe_first(timestep)
    return np.stack(actions)


def test_central_inference_adds_an_inference_node_the_actors_talk_to_instead_of_the_learner(tmp_path):
    from launch import describe_program, make_distributed_program, make_experiment_config
    from launch.engines.distributed.graph import experiment_graph

    config = make_experiment_config(
        agent="dqn", environment="CartPole-v1", max_num_actor_steps=10, run_dir=str(tmp_path), num_envs=2,
        inference="central",
    )
    graph = {node.name: node for node in experiment_graph(config, num_actors=3)}
    assert graph["inference"].references() == ["learner"]
    assert graph["inference"].args[1] == 6, "one batch holds every actor's sub-environments"
    assert graph["actor_2"].references() == ["replay", "counter", "inference"]
    text = describe_program(make_distributed_program(config, num_actors=3))
    assert "inference      CourierNode  receives: learner" in text
    assert "actor_2        CourierNode  receives: replay, counter, inference" in text
    with pytest.raises(ValueError, match="inference"):
        make_experiment_config(agent="dqn", environment="CartPole-v1", max_num_actor_steps=10, inference="remote")


@pytest.mark.parametrize("agent, num_envs", [("dqn", 1), ("r2d2", 2)], ids=["dqn-one-env", "r2d2-two-envs"])
def test_inference_node_serves_the_actions_of_local_inference(agent, num_envs, tmp_path):
    """Two actors share one InferenceNode (through the client and wire format actors use) and choose exactly the
    actions their local policies choose with the same parameters and keys: DQN's exploration clock, R2D2's LSTM
    state and per-actor epsilon live on the node, per actor and sub-environment."""
    from acmelike.variables import StaticVariableSource
    from launch import make_experiment_config
    from launch.engines.distributed import runtime
    from launch.experiments.parts import AgentParts
    from launch.engines.distributed.nodes import InferenceNode, InferenceNodeClient, StopAwareClient

    num_actors, steps = 2, 60
    config = make_experiment_config(
        agent=agent, environment="CartPole-v1", max_num_actor_steps=1000, num_envs=num_envs, inference="central",
        config_overrides=["variable_update_period=1"],
    )
    parts = AgentParts(config)
    params = getattr(parts.networks, NETWORK[agent]).init(jax.random.PRNGKey(3))
    local = [
        _actions(parts.actor(a, variable_source=StaticVariableSource({"policy": params}), adder=None),
                 parts.actor_environment(a), steps)
        for a in range(num_actors)
    ]
    stop = threading.Event()
    runtime.install(runtime.Runtime(lambda: stop, stop.set, "test"))
    pool = concurrent.futures.ThreadPoolExecutor(8)
    try:
        node = InferenceNode(config, num_actors * num_envs, _EngineClient(_Learner(params), pool), str(tmp_path))
        serving = threading.Thread(target=node.run)
        serving.start()
        central = [None] * num_actors

        def act(a):
            client = InferenceNodeClient(StopAwareClient(_EngineClient(node, pool), stop))
            actor = parts.inference_client_actor(a, server=client, adder=None)
            central[a] = _actions(actor, parts.actor_environment(a), steps)

        actors = [threading.Thread(target=act, args=(a,)) for a in range(num_actors)]
        for thread in actors:
            thread.start()
        for thread in actors:
            thread.join(timeout=300)
    finally:
        stop.set()
        serving.join(timeout=30)
        pool.shutdown()
        runtime.install(None)
    assert not serving.is_alive(), "the inference node's run() ends at the stop event"
    for a in range(num_actors):
        np.testing.assert_array_equal(central[a], local[a])
    assert len(np.unique(np.concatenate(local))) == 2, "both actions occur"
    assert max(node._server.batch_sizes) == num_actors * num_envs, "the two actors' requests were served together"


def test_failing_actor_under_central_inference_stops_program_and_is_named(tmp_path):
    launcher = Launcher("fail", "--launch", "local_mt", "--inference", "central", "--steps", 1_000_000, run_dir=tmp_path)
    assert launcher.wait(timeout=400) == 1, launcher.output[-5000:]
    failure = line_after(launcher.output, "FAILED ")
    assert "actor_0" in failure and "inference" not in failure.split("(")[0], launcher.output[-5000:]
    assert "injected failure after 300 steps" in launcher.output
    assert (tmp_path / "failures" / "actor_0.txt").exists()
    assert launcher.left_behind() == []


@long_test  # ~6 min of a loaded 2-core machine; CI has the action-for-action test above
def test_central_inference_dqn_learns_cartpole(tmp_path):
    budget = 100_000
    launcher = Launcher(
        "learn", "--launch", "local_mp", "--inference", "central", "--actors", 2, "--steps", budget,
        "--eval-every", 5_000, "--stop-at-return", 400, run_dir=tmp_path,
    )
    assert launcher.wait(timeout=900) == 0, launcher.output[-5000:]
    summary = json.loads(line_after(launcher.output, "DISTRIBUTED "))
    assert summary["inference"] == "central"
    assert summary["average_evaluator_return"] >= 400, summary
    # The actors' own episodes, played with the actions the inference node served: an inference node that never
    # refreshed its parameters leaves them near 50-70 (measured) while the learner, fed epsilon-greedy data,
    # still learns and the evaluator (which asks the learner) still passes.
    assert summary["average_return_last_20"] >= 150, summary
    assert summary["interrupted"] is False  # the evaluator ended it at the target return
    assert launcher.left_behind() == []
