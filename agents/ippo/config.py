"""IPPO/MAPPO hyperparameters: PPO's (`agents.ppo.config.PPOConfig`, same checks), multi-agent defaults, and
how agents share parameters.

The defaults start from the MAPPO paper's MPE settings (Yu et al., 2022, "The Surprising Effectiveness of PPO in
Cooperative Multi-Agent Games": gamma 0.99, GAE lambda 0.95, clip 0.2, entropy 0.01, 64-unit layers, 10 epochs);
an unroll of 25 steps is one MPE episode. Its learning rate (7e-4), one minibatch and gradients clipped to norm 10
learned slowly on simple_spread here (batches of 8 x 25 steps, not its 128 x 25; no value normalisation, so the
unnormalised value gradients dominate a joint clip): approx KL per update ~0.002, the 20-episode average reached
-60 after 26.6k steps. Learning rate 3e-3, 4 minibatches and (in effect) no clipping reached it after 10.6k
(seed 0; 14.8k with only the clipping removed, 15.0k with the learning rate raised as well but one minibatch).
"""

import dataclasses
from typing import Tuple

from acmelike.config_checks import check_field
from agents.multiagent import mapping_problem
from agents.ppo.config import PPOConfig

SHARED_POLICY = "shared"  # the policy of every agent `policy_mapping` does not name

_ATTRIBUTES = """
The fields IPPO uses as PPO does are documented in PPOConfig and its parts.

Attributes:
  unroll_length: environment steps per sequence (all agents' steps together); items hold `unroll_length + 1`.
  batch_size: sequences per learner step; each holds every agent's steps.
  gae_lambda: lambda of generalized advantage estimation, in [0, 1], computed per agent.
  value_cost: weight of the value loss 0.5 (v - R) ** 2 in each policy's loss; >= 0.
  entropy_cost: weight of the entropy bonus in each policy's loss; >= 0.
  max_gradient_norm: global norm the gradients (of all policies together) are clipped to before Adam; > 0.
  num_minibatches: minibatches per epoch (of time steps, each with every agent's step); must divide
    batch_size * unroll_length.
  normalize_advantages: rescale each policy's advantages in a batch to mean 0, standard deviation 1 (steps of
    absent agents excluded).
  torso: "mlp" only: IPPO's and MAPPO's policy and value are MLPs over vector observations (PPO's conv torsos
    are single-agent).
  hidden_sizes: hidden layer sizes of the shared policy MLP and of the separate value MLP (tanh activations).
  agent_id_input: append a one-hot of the agent's index among the agents sharing its policy to what the actor
    and critic see, so shared parameters can still act differently per agent.
  centralised_critic: the critic sees the global state (every agent's observation, concatenated) instead of
    the agent's own observation: MAPPO; False: IPPO.
  policy_mapping: "agent_id:policy,agent_id:policy,..."; agents mapped to the same policy share its
    parameters (e.g. one policy per team). Agents not named share the policy "shared"; "" (default): all
    agents share one policy.
"""


@dataclasses.dataclass(frozen=True)
class IPPOConfig(PPOConfig):
    __doc__ = "Parameter-shared PPO's hyperparameters; every field can be set with `--config field=value`.\n" + _ATTRIBUTES

    unroll_length: int = 25
    batch_size: int = 8
    replay_table_name: str = "ippo_queue"
    learning_rate: float = 3e-3
    discount: float = 0.99
    gae_lambda: float = 0.95
    entropy_cost: float = 0.01
    max_gradient_norm: float = 1000.0
    num_minibatches: int = 4
    hidden_sizes: Tuple[int, ...] = (64, 64)
    agent_id_input: bool = True
    centralised_critic: bool = False
    policy_mapping: str = ""

    def __post_init__(self):
        super().__post_init__()
        check_field(self, "torso", self.torso == "mlp", '"mlp" (multi-agent PPO has no conv torso)')
        problem = mapping_problem(self.policy_mapping)
        check_field(self, "policy_mapping", not problem, f'"agent_id:policy,..." ({problem})')


@dataclasses.dataclass(frozen=True)
class MAPPOConfig(IPPOConfig):
    __doc__ = "MAPPO's hyperparameters: IPPO's with a centralised critic.\n\n" + _ATTRIBUTES

    replay_table_name: str = "mappo_queue"
    centralised_critic: bool = True
