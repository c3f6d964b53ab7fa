"""The distributed program as data: which nodes, built how, talking to whom; each engine executes this one graph.

    graph = experiment_graph(config, num_actors=2)
    for node in graph:                       # dependencies come before the nodes that hold a `Ref` to them
        print(node.name, node.group, node.references())

`launch.engines.distributed.launchpad_engine` turns the graph into a Launchpad program and `launch.engines.distributed.ray_engine` into Ray actors; neither
repeats a node's body (`launch.engines.distributed.nodes`). A `Ref` in a node's arguments is replaced, inside the node's own
process, by the engine's client of that node (for a Reverb replay node: a `reverb.Client`; for a LOCAL_REPLAY node:
an `acmelike.replay.remote.RemoteReplay` over the engine's client).

The replay node is a Reverb server (REPLAY) when `config.replay` is "reverb" (Launchpad's programs always), else
a service over the local replay's tables (LOCAL_REPLAY, `launch.engines.distributed.replay_node`), which the Ray
engine runs where Reverb is not installed.
"""

import dataclasses
from typing import Any, Callable, Dict, List, Tuple

from launch.engines.distributed import nodes
from launch.engines.distributed.replay_node import ReplayNode
from launch.lifecycle import node_checkpoints
from launch.experiments.config import ExperimentConfig

REPLAY = "replay"  # a Reverb server over `constructor()`'s tables
SERVICE = "service"  # an object whose methods other nodes call, and whose `run()` (if any) the engine runs
LOCAL_REPLAY = "local_replay"  # a SERVICE serving the local replay's tables; other nodes receive a RemoteReplay
# Groups whose node an engine restarts when its process dies (Ray's max_restarts, local_mp's NODE_RESTARTS): an actor
# is rebuilt from the config and its own checkpoint; a node of another group stops the program when it dies.
RESTARTABLE_GROUPS = ("actor",)


@dataclasses.dataclass(frozen=True)
class Ref:
    """Another node of the program, by name; the engine hands the node a client of it in its place."""

    node: str


@dataclasses.dataclass(frozen=True)
class Node:
    """One node: `constructor(*args, **kwargs)` builds it in its own thread or process.

    Attributes:
      name: unique in the program (`actor_0`); failures and logs are named after it.
      group: what the node is (`actor`); engines group nodes and place them by it.
      kind: REPLAY (the constructor returns the Reverb tables; `kwargs["checkpointer"]`, if there, is called in the
        node's process for the server's Reverb checkpointer), LOCAL_REPLAY or SERVICE.
    """

    name: str
    group: str
    kind: str
    constructor: Callable[..., Any]
    args: Tuple[Any, ...] = ()
    kwargs: Dict[str, Any] = dataclasses.field(default_factory=dict)

    def references(self) -> List[str]:
        """The names of the nodes this one talks to, in argument order."""
        values = list(self.args) + list(self.kwargs.values())
        return list(dict.fromkeys(value.node for value in values if isinstance(value, Ref)))


class ReplayTables:
    """The replay node's tables (picklable): inserts may block, since actors and learner run concurrently."""

    def __init__(self, config: ExperimentConfig):
        self._config = config

    def __call__(self):
        return nodes.make_replay_tables(self._config)


def replay_checkpointing(config: ExperimentConfig) -> Dict[str, Any]:
    """The replay node's kwargs: with a run directory, a Reverb checkpointer that restores the run's replay."""
    return {"checkpointer": node_checkpoints.ReplayCheckpointing(config)} if config.run_dir else {}


def experiment_graph(config: ExperimentConfig, num_actors: int) -> List[Node]:
    """replay, counter, learner, an inference node (when `config.inference` is "central"; the actors then
    talk to it instead of the learner), `num_actors` actors, an evaluator (unless `config.evaluation_every` is 0), and
    the steps limiter, in an order where every node comes after the nodes it references."""
    if num_actors < 1:
        raise ValueError(f"num_actors must be >= 1, got {num_actors}.")
    run_dir = config.run_dir
    replay, counter, learner = Ref("replay"), Ref("counter"), Ref("learner")
    if config.replay == "reverb":
        replay_node = Node("replay", "replay", REPLAY, ReplayTables(config), kwargs=replay_checkpointing(config))
    else:
        replay_node = Node("replay", "replay", LOCAL_REPLAY, ReplayNode, (config,))
    graph = [
        replay_node,
        Node("counter", "counter", SERVICE, node_checkpoints.restored_counter, (config,)),
        Node("learner", "learner", SERVICE, nodes.LearnerNode, (config, replay, counter, run_dir)),
    ]
    central = config.inference == "central"  # one inference node serves every actor's policy (SEED RL)
    if central:
        batch = num_actors * config.num_envs
        graph.append(Node("inference", "inference", SERVICE, nodes.InferenceNode, (config, batch, learner, run_dir)))
    graph += [
        Node(f"actor_{index}", "actor", SERVICE, nodes.ActorNode,
             (config, index, replay, None if central else learner, counter, run_dir),
             {"inference": Ref("inference")} if central else {})
        for index in range(num_actors)
    ]
    if config.evaluation_every:
        graph.append(Node("evaluator", "evaluator", SERVICE, nodes.EvaluatorNode, (config, learner, counter, run_dir)))
    graph.append(
        Node("steps_limiter", "steps_limiter", SERVICE, nodes.StepsLimiter, (counter, config.max_num_actor_steps, run_dir),
             {"learner": learner})
    )
    return graph
