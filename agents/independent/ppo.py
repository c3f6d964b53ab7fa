"""`independent_ppo`: one PPO learner per policy (by default per agent), each on its own queue, behind
`DecentralisedBuilder`."""

from agents import ppo
from agents.independent import independent_definition
from agents.independent.config import IndependentPPOConfig

AGENT = independent_definition(ppo.AGENT, IndependentPPOConfig)
