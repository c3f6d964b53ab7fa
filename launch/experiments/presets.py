"""Presets: per-task hyperparameters kept in versioned files, as rl-baselines3-zoo keeps its hyperparameter files.

    launch/presets/<name>.json    {"description": ..., "agents": {agent: {"notes", "config", "tasks"}}}
    python -m launch --agent sac --env Hopper-v5 --preset mujoco --config batch_size=512

An agent's entry holds `config` (its config fields, for every task) and optionally `tasks` (environment name ->
fields that only that task takes, applied after `config`), and `notes` (where the values come from and how they
differ from the published ones). A preset's values come before the command line's `--config` overrides, so
`--config` wins. The results runner (`benchmarks/results_runner/`) trains with the same presets, so a user gets
the same numbers with the same flags.

    preset_overrides("mujoco", "d4pg", "Hopper-v5")   # ["policy_learning_rate=0.0003", ..., "v_max=500.0"]
"""

import dataclasses
import json
import os
from typing import Any, Dict, List, Mapping, Optional

from launch.experiments.overrides import assignments

PRESETS_DIRECTORY = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "presets")


@dataclasses.dataclass(frozen=True)
class AgentPreset:
    """One agent's entry in a preset.

    Attributes:
      config: config field -> value, for every task.
      tasks: environment name (as given to --env) -> config field -> value, applied after `config`.
      notes: where the values come from, and how they differ from the published settings.
    """

    config: Mapping[str, Any]
    tasks: Mapping[str, Mapping[str, Any]]
    notes: str = ""


@dataclasses.dataclass(frozen=True)
class Preset:
    """A preset file: its name (the file's, without .json), description and agents' entries."""

    name: str
    description: str
    agents: Mapping[str, AgentPreset]
    path: str


def preset_names() -> List[str]:
    """The presets in `launch/presets/`, sorted."""
    return sorted(name[:-len(".json")] for name in os.listdir(PRESETS_DIRECTORY) if name.endswith(".json"))


def load_preset(name: str) -> Preset:
    """The preset `name`; ValueError naming the choices if there is none, or naming the file if it is malformed."""
    names = preset_names()
    if name not in names:
        raise ValueError(f"--preset {name}: no such preset; choose one of: {', '.join(names)} ({PRESETS_DIRECTORY}).")
    path = os.path.join(PRESETS_DIRECTORY, f"{name}.json")
    with open(path) as f:
        try:
            data = json.load(f)
        except json.JSONDecodeError as error:
            raise ValueError(f"--preset {name}: {path} is not valid JSON ({error}).") from None
    try:
        agents = {
            agent: AgentPreset(config=dict(entry.get("config", {})), tasks=dict(entry.get("tasks", {})),
                               notes=entry.get("notes", ""))
            for agent, entry in data["agents"].items()
        }
    except (KeyError, AttributeError, TypeError) as error:
        raise ValueError(f"--preset {name}: {path} needs {{\"agents\": {{agent: {{\"config\": {{...}}}}}}}} "
                         f"({type(error).__name__}: {error}).") from None
    return Preset(name=name, description=data.get("description", ""), agents=agents, path=path)


def agent_preset(name: str, agent: str) -> AgentPreset:
    """`agent`'s entry in the preset `name`; ValueError naming the preset's agents if it has none."""
    preset = load_preset(name)
    if agent not in preset.agents:
        raise ValueError(
            f"--preset {name} has no entry for agent {agent!r}; it has: {', '.join(sorted(preset.agents))} "
            f"({preset.path}). Drop --preset, or add an entry for {agent}."
        )
    return preset.agents[agent]


def preset_values(name: str, agent: str, environment: Optional[str] = None) -> Dict[str, Any]:
    """The config fields the preset `name` sets for `agent` on `environment`: its `config`, then the task's own."""
    entry = agent_preset(name, agent)
    return {**entry.config, **(entry.tasks.get(environment, {}) if environment else {})}


def preset_overrides(name: str, agent: str, environment: Optional[str] = None) -> List[str]:
    """The preset's values as `--config` assignments ("field=value") in the order they apply: the agent's
    `config`, then the task's (a field in both comes twice; the task's, later, wins)."""
    entry = agent_preset(name, agent)
    task = entry.tasks.get(environment, {}) if environment else {}
    return assignments(entry.config) + assignments(task)

