"""The one table of agents: every name the command line, error messages, snapshots and smoke tests know.

Each entry names a package whose `AGENT` is an `acmelike.builders.AgentDefinition`: config class, builder, network
factory, action space, smoke-test config, whether it learns offline, and its Anakin (fully jitted) form if it has
one. Adding an agent, offline and Anakin forms included, is its folder plus one line here.
"""

import importlib
from typing import Dict, List

from acmelike.builders import AgentDefinition

# name -> package defining AGENT (imported only when the agent is used).
AGENTS: Dict[str, str] = {
    "dqn": "agents.dqn",
    "ppo": "agents.ppo",
    "sac": "agents.sac",
    "td3": "agents.td3",
    "d4pg": "agents.d4pg",
    "mpo": "agents.mpo",
    "impala": "agents.impala",
    "r2d2": "agents.r2d2",
    "ippo": "agents.ippo",
    "mappo": "agents.ippo.mappo",
    "independent_dqn": "agents.independent",
    "independent_ppo": "agents.independent.ppo",
    "muzero": "agents.muzero",
    "bc": "agents.bc",
    "cql": "agents.cql",
    "cql_continuous": "agents.cql.continuous",
}


def agent_definition(name: str) -> AgentDefinition:
    """The registered agent `name`; ValueError listing the choices if unknown."""
    if name not in AGENTS:
        raise ValueError(f"Unknown agent {name!r}. Choose one of: {', '.join(sorted(AGENTS))}.")
    definition = importlib.import_module(AGENTS[name]).AGENT
    if definition.name != name:
        raise ValueError(f"Registry entry {name!r} points at {AGENTS[name]}, whose AGENT is named {definition.name!r}.")
    return definition


def online_agents() -> List[str]:
    """Agents that learn from their own actors (every runner but offline)."""
    return sorted(name for name in AGENTS if not agent_definition(name).offline)


def offline_agents() -> List[str]:
    """Agents that learn from a fixed dataset (`--dataset`)."""
    return sorted(name for name in AGENTS if agent_definition(name).offline)


def anakin_agents() -> List[str]:
    """Agents with a fully jitted form (`--launch anakin`)."""
    return sorted(name for name in AGENTS if agent_definition(name).anakin is not None)


def agents_for_action_space(action_space: str, multiagent: bool = False) -> List[str]:
    """Online agents whose networks take `action_space` ("discrete" or "continuous"), of multi-agent
    environments if `multiagent`, else of single-agent ones."""
    return [name for name in online_agents()
            if agent_definition(name).action_space == action_space and agent_definition(name).multiagent == multiagent]
