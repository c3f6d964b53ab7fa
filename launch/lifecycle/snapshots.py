"""Snapshots of a run's evaluation policy, naming the agent by its registry name (format: `acmelike.snapshots`).

    path = save_run_snapshot(config, learner, spec, step)     # <run_dir>/snapshots/<step>/
    actor = load_actor("runs/dqn")                             # the run's newest snapshot, as an actor
"""

from typing import Optional

from acmelike import core
from acmelike.builders import AgentDefinition
from acmelike.snapshots import Snapshot, save_snapshot
from acmelike.snapshots import load_snapshot as load_snapshot_with
from launch.registry import agent_definition


def save_run_snapshot(config, learner, environment_spec, step: int) -> str:
    """Saves `learner`'s "policy" variables as `<run_dir>/snapshots/<step>/`, with what rebuilds the agent."""
    (params,) = learner.get_variables(["policy"])
    return save_snapshot(
        config.run_dir, step=step, params=params, agent=config.agent, config=config.agent_config,
        environment_spec=environment_spec, environment=config.environment, action_repeat=config.action_repeat,
    )


def load_snapshot(path: str, agent: Optional[AgentDefinition] = None) -> Snapshot:
    """The snapshot at `path` (a run directory, its snapshots/ folder, or one snapshot), its agent found in the
    registry (`launch.registry`), or `agent` if the snapshot names it: an agent of your own, passed again (a
    snapshot never names code to import). CheckpointError naming the file if it is unusable or names an agent
    that is neither."""

    def resolve(name: str) -> AgentDefinition:
        return agent if agent is not None and agent.name == name else agent_definition(name)

    return load_snapshot_with(path, resolve_agent=resolve)


def load_actor(path: str, seed: int = 0, agent: Optional[AgentDefinition] = None) -> core.Actor:
    """The evaluation policy of the snapshot at `path` as an actor, with no learner, replay or Launchpad;
    `agent`: the `AgentDefinition` of an agent of your own that trained it (`load_snapshot`)."""
    return load_snapshot(path, agent).make_actor(seed)
