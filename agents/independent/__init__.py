"""Independent learners: every agent (or every team, `policy_mapping`) learns with its own copy of a single-agent
agent, built by that agent's unchanged builder behind a builder of builders (`DecentralisedBuilder`).

`independent_dqn` is defined here, `independent_ppo` in `agents.independent.ppo`; another single-agent agent
becomes independent with `independent_definition`."""

import functools

from acmelike.builders import AgentDefinition
from agents import dqn
from agents.independent.anakin import make_anakin_agent
from agents.independent.builder import DecentralisedBuilder, DecentralisedNetworks, make_networks
from agents.independent.config import IndependentDQNConfig


def independent_definition(single: AgentDefinition, config_class: type) -> AgentDefinition:
    """`independent_<single's name>`: one `single` learner per policy; `config_class` is
    `independent_config_class(single.config_class)`, bound to a module-level name. Its Anakin form
    (`agents.independent.anakin`) exists where `single`'s does."""
    return AgentDefinition(
        name=f"independent_{single.name}",
        config_class=config_class,
        make_builder=functools.partial(DecentralisedBuilder, single=single),
        make_networks=functools.partial(make_networks, single=single),
        action_space=single.action_space,
        multiagent=True,
        central_inference=False,
        smoke_config=single.smoke_config,
        anakin=functools.partial(make_anakin_agent, single=single) if single.anakin is not None else None,
    )


AGENT = independent_definition(dqn.AGENT, IndependentDQNConfig)

__all__ = ["AGENT", "DecentralisedBuilder", "DecentralisedNetworks", "IndependentDQNConfig", "independent_definition",
           "make_networks"]
