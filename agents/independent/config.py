"""Configs of independent learners: a single-agent config's fields, plus which agents share a learner."""

import dataclasses

from acmelike.config_checks import check_field
from agents.dqn.config import DQNConfig
from agents.multiagent import mapping_problem
from agents.ppo.config import PPOConfig


def independent_config_class(single_config_class: type) -> type:
    """`Independent<Name>`: `single_config_class`'s fields (each policy's learner config, each policy's tables
    named `<replay_table_name>_<policy>`) plus `policy_mapping`. Bind the result to the module-level name it
    reports, so that pickling (Launchpad's local_mp) finds it."""

    @dataclasses.dataclass(frozen=True)
    class IndependentConfig(single_config_class):
        """Independent learners' hyperparameters: the single-agent config's, plus which agents share a learner.

        Attributes:
          policy_mapping: "agent_id:policy,..."; agents mapped to the same policy share one learner, replay table and
            parameters. Agents not named learn alone (their policy is their id); "" (default): every agent learns
            alone.
        """

        policy_mapping: str = ""

        def __post_init__(self):
            super().__post_init__()
            problem = mapping_problem(self.policy_mapping)
            check_field(self, "policy_mapping", not problem, f'"agent_id:policy,..." ({problem})')

    IndependentConfig.__name__ = IndependentConfig.__qualname__ = f"Independent{single_config_class.__name__}"
    IndependentConfig.__module__ = __name__
    return IndependentConfig


IndependentDQNConfig = independent_config_class(DQNConfig)
IndependentPPOConfig = independent_config_class(PPOConfig)
