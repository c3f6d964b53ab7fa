"""InferenceNode: central batched inference in a Launchpad program (`--inference central`).

One node holds the policy's parameters (fetched from the learner) and serves `select_action` for every actor
through an `acmelike.actors.inference.InferenceServer`: requests are batched dynamically, up to all actors'
environments at once or `TIMEOUT_S` after the first request. Actors then only step environments and write to
replay (`AgentParts.central_actor`). Each actor's core state lives here, keyed by its index.
"""

import threading
from typing import Optional

import numpy as np

from acmelike import core
from acmelike.actors.inference import InferenceServer
from acmelike.variables import RemoteVariableSource, VariableClient
from launch.construction import AgentParts
from launch.experiment import ExperimentConfig
from launch.nodes import _stop_aware, report_failures

TIMEOUT_S = 0.002  # the longest a request waits for others to join its batch


class InferenceNode(core.Worker):
    def __init__(self, config: ExperimentConfig, num_actors: int, learner, run_dir: Optional[str]):
        self._run_dir = run_dir
        (learner,) = _stop_aware(learner)
        with report_failures("inference", run_dir):
            parts = AgentParts(config)
            period = getattr(config.builder.config, "variable_update_period", 1)
            self._server = InferenceServer(
                parts.policy(),
                VariableClient(RemoteVariableSource(learner), "policy", update_period=period),
                max_batch_size=num_actors * config.num_envs,
                timeout_s=TIMEOUT_S,
            )

    def register(self, actor_id, random_key, num_envs: int) -> None:
        self._server.register(actor_id, np.asarray(random_key), num_envs)

    def select_action(self, actor_id, observations, starting, finished):
        return self._server.select_action(actor_id, observations, starting, finished)

    def run(self) -> None:
        import launchpad as lp

        stop = lp.stop_event()
        with report_failures("inference", self._run_dir):
            serving = threading.Thread(target=self._server.run, name="inference-batches", daemon=True)
            serving.start()
            stop.wait()
            self._server.stop()
