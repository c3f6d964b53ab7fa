"""What multi-agent agents share: who shares which policy, and the per-agent view of a multi-agent spec.

A multi-agent environment (`acmelike.wrappers.pettingzoo_adapter`) has specs that are dicts keyed by agent id.
`policy_mapping` ("agent_id:policy,...", a config field) names the policy each agent runs; agents mapped to the
same policy share its parameters, so they must have the same observation and action specs.
"""

from typing import Callable, Dict, Tuple

from acmelike.specs import EnvironmentSpec
from acmelike.wrappers.pettingzoo_adapter import agent_ids, is_multiagent_spec


def parse_policy_mapping(text: str) -> Dict[str, str]:
    """"a:x,b:y" -> {"a": "x", "b": "y"}; ValueError naming the entry that is not "agent_id:policy"."""
    mapping = {}
    for entry in filter(None, (item.strip() for item in text.split(","))):
        agent, sep, policy = (part.strip() for part in entry.partition(":"))
        if not sep or not agent or not policy:
            raise ValueError(f"entry {entry!r} is not agent_id:policy")
        if agent in mapping:
            raise ValueError(f"agent {agent!r} is mapped twice")
        mapping[agent] = policy
    return mapping


def mapping_problem(text: str) -> str:
    """What is wrong with a `policy_mapping` string ("" if nothing), for a config's `__post_init__`."""
    try:
        parse_policy_mapping(text)
    except ValueError as error:
        return str(error)
    return ""


def agent_spec(spec: EnvironmentSpec, agent: str) -> EnvironmentSpec:
    """The single-agent spec of `agent` in the multi-agent `spec` (its observation without the active flag)."""
    return EnvironmentSpec(observations=spec.observations[agent].observation, actions=spec.actions[agent],
                           rewards=spec.rewards[agent], discounts=spec.discounts[agent])


def policy_groups(agent: str, spec: EnvironmentSpec, policy_mapping: str,
                  default: Callable[[str], str]) -> Dict[str, Tuple[str, ...]]:
    """{policy name: the agents running it, in environment order}, from `policy_mapping`; an agent it does not
    name runs `default(agent_id)`.

    ValueError, naming `agent` (the agent's name, e.g. "IPPO") and the agent ids: `spec` is not a multi-agent spec;
    the mapping names an agent the environment lacks; agents sharing a policy have different specs.
    """
    if not is_multiagent_spec(spec):
        raise ValueError(
            f"{agent} needs a multi-agent environment (dicts of per-agent specs keyed by agent id, from "
            f"acmelike.wrappers.pettingzoo_adapter; e.g. --env mpe/simple_spread_v3), but the environment's "
            f"observation spec is {spec.observations!r}."
        )
    ids = agent_ids(spec)
    mapping = parse_policy_mapping(policy_mapping)
    for named in mapping:
        if named not in ids:
            raise ValueError(f"{agent}: policy_mapping names agent {named!r}, which the environment does not have; "
                             f"its agents are {', '.join(ids)}.")
    groups: Dict[str, list] = {}
    for agent_id in ids:
        groups.setdefault(mapping.get(agent_id, default(agent_id)), []).append(agent_id)
    for policy, members in groups.items():
        first = agent_spec(spec, members[0])
        for other in members[1:]:
            for what in ("observations", "actions"):
                mine, theirs = getattr(first, what), getattr(agent_spec(spec, other), what)
                if mine != theirs:
                    raise ValueError(
                        f"{agent}: agents {members[0]!r} and {other!r} share the parameters of policy {policy!r}, "
                        f"but their {what[:-1]} specs differ: {mine!r} vs {theirs!r}. Give them different "
                        f"policies, e.g. --config policy_mapping={members[0]}:{members[0]},{other}:{other}."
                    )
    return {policy: tuple(members) for policy, members in groups.items()}
