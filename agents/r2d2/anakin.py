"""R2D2's fully jitted form (Anakin): its builder's recurrent policy and its own pure update step, with on-device
prioritized sequence replay (`acmelike.anakin.recurrent_replay`)."""

from typing import Optional

from acmelike.anakin import JaxEnvironment
from acmelike.anakin.agent import AnakinAgent
from acmelike.anakin.recurrent_replay import builder_sequence_replay_agent
from agents.r2d2 import learning
from agents.r2d2.builder import R2D2Builder
from agents.r2d2.config import R2D2Config
from agents.r2d2.networks import make_networks


def make_anakin_agent(environment: JaxEnvironment, config: R2D2Config, num_envs: Optional[int] = None
                      ) -> AnakinAgent:
    """R2D2 through `acmelike.anakin.recurrent_replay.builder_sequence_replay_agent`. Every field of `R2D2Config` means
    what it means in the other runners:

    - sequences of `burn_in_length + trace_length + 1` rows, one every `sequence_period` rows of each environment
      (a CONTINUE SequenceAdder's items), each row storing the LSTM state that chose its action; the update
      starts from the first row's and burns it in;
    - `max_replay_size` and `min_replay_size` in sequences, prioritized by `priority_exponent` with new sequences at
      priority 1.0 and each SGD step's priorities (`priority_eta`) written back, `importance_sampling_exponent`
      correcting them (the update's, which decides once for every seed whether the target network's copy is due,
      `seeds_axis`, so the other steps do not copy it); `samples_per_insert` held exactly (so
      `samples_per_insert_tolerance_rate` never matters; there is no `replay_table_name` table);
    - by default one environment per sequence an iteration inserts (4 with the defaults: 32 samples / 8 per insert,
      each environment writing `sequence_period` rows per iteration), each with its own Ape-X epsilon drawn once
      from `epsilon`, `epsilon_alpha`, `num_epsilons`, and its own copy of the parameters fetched every
      `variable_update_period` of its actions (`StepStream`). The runner has no evaluator, so
      `evaluation_epsilon` has no policy to set.
    """
    networks = make_networks(environment.spec, config)
    return builder_sequence_replay_agent("r2d2", environment, config, R2D2Builder(config), networks, learning,
                                         num_envs=num_envs)
