"""Configs of independent learners: a single-agent config's fields, plus which agents share a learner."""

import dataclasses

from acmelike.config_checks import check_field
from agents.dqn.config import DQNConfig
from agents.multiagent import mapping_problem

# One line of an `Attributes:` section, at the indentation of DQNConfig's docstring.
_POLICY_MAPPING_DOC = (
    "\n      policy_mapping: \"agent_id:policy,...\"; agents mapped to the same policy share one learner, replay "
    "table and parameters. Agents not named learn alone (their policy is their id); \"\" (default): every agent "
    "learns alone.\n"
)


@dataclasses.dataclass(frozen=True)
class IndependentDQNConfig(DQNConfig):
    # DQN's fields (the per-policy learners' config, each policy's table named `<replay_table_name>_<policy>`).
    __doc__ = DQNConfig.__doc__.rstrip() + _POLICY_MAPPING_DOC

    policy_mapping: str = ""

    def __post_init__(self):
        super().__post_init__()
        problem = mapping_problem(self.policy_mapping)
        check_field(self, "policy_mapping", not problem, f'"agent_id:policy,..." ({problem})')
