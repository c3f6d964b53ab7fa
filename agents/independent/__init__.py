"""Independent learners: every agent (or every team, `policy_mapping`) learns with its own copy of a single-agent
agent, built by that agent's unchanged builder behind a builder of builders (`DecentralisedBuilder`)."""

import functools

from acmelike.builders import AgentDefinition
from agents import dqn
from agents.independent.builder import DecentralisedBuilder, DecentralisedNetworks, make_networks
from agents.independent.config import IndependentDQNConfig

AGENT = AgentDefinition(
    name="independent_dqn",
    config_class=IndependentDQNConfig,
    make_builder=functools.partial(DecentralisedBuilder, single=dqn.AGENT),
    make_networks=functools.partial(make_networks, single=dqn.AGENT),
    action_space="discrete",
    multiagent=True,
    smoke_config=dqn.AGENT.smoke_config,
)

__all__ = ["AGENT", "DecentralisedBuilder", "DecentralisedNetworks", "IndependentDQNConfig", "make_networks"]
