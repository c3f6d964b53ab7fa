"""The replay node that serves the local replay's tables (`acmelike.replay.remote`): a distributed program's replay
where Reverb is not installed, and the Ray engine's whenever the config's replay is "local" (its default).

    node = ReplayNode(config)            # in the node's process: the builder's tables, restored from the run's
                                         # latest checkpoint if it has one
    replay = RemoteReplay(handle)        # every other node: the engine's client of this node, as a replay client

It is an ordinary service node (`graph.LOCAL_REPLAY`): the engine serves its methods (`ReplayServer`'s) from many
threads at once, and its `run()` waits for the program's stop, then ends every wait still held in the server.
Checkpoints go where a Reverb server's do: each into a new directory under `<run_dir>/checkpoints/replay_staging/`,
which the learner's checkpointer moves into the checkpoint it writes (`launch.lifecycle.node_checkpoints`), in
`LocalReplay`'s format.
"""

import os
import shutil
from typing import Optional

from acmelike.checkpointing import check_metadata, read_metadata
from acmelike.replay.remote import ReplayServer
from launch.engines.distributed import runtime
from launch.experiments.config import ExperimentConfig
from launch.experiments.parts import AgentParts
from launch.lifecycle.replay_checkpoints import REPLAY_STAGING, replay_directory
from launch.lifecycle.run_directory import CHECKPOINTS, latest_run_checkpoint, run_identity


def staging_directory(run_dir: Optional[str]) -> Optional[str]:
    """Where the node writes its checkpoints (emptied: a checkpoint a killed save never moved), or None."""
    if not run_dir:
        return None
    staging = os.path.join(run_dir, CHECKPOINTS, REPLAY_STAGING)
    shutil.rmtree(staging, ignore_errors=True)
    return staging


class ReplayNode(ReplayServer):
    """The builder's tables (inserts may wait: actors and learner run concurrently), seeded by `config.seed`, as a
    `ReplayServer`; restored from the run's latest checkpoint when the run has one (resumed, or this node
    restarted)."""

    def __init__(self, config: ExperimentConfig):
        tables = AgentParts(config).replay_tables(inserts_may_block=True)
        super().__init__(tables, seed=config.seed, staging_dir=staging_directory(config.run_dir))
        latest = latest_run_checkpoint(config.run_dir)
        if latest is not None:
            check_metadata(latest, read_metadata(latest), run_identity(config))
            self.restore(replay_directory(latest))

    def run(self) -> None:
        runtime.stop_event().wait()
        self.close()
