"""MuZero's fully jitted form (Anakin): its builder's search policy (`mctx`, inside the jitted loop) and its own pure
update step, with on-device prioritized sequence replay (`acmelike.anakin.recurrent_replay`, R2D2's, as
`MuZeroBuilder` reuses R2D2's replay in the other runners)."""

from typing import Optional

from acmelike.anakin import JaxEnvironment
from acmelike.anakin.agent import AnakinAgent
from acmelike.anakin.recurrent_replay import builder_sequence_replay_agent
from agents.muzero import learning
from agents.muzero.builder import MuZeroBuilder
from agents.muzero.config import MuZeroConfig
from agents.muzero.networks import make_networks


def make_anakin_agent(environment: JaxEnvironment, config: MuZeroConfig, num_envs: Optional[int] = None
                      ) -> AnakinAgent:
    """MuZero through `acmelike.anakin.recurrent_replay.builder_sequence_replay_agent`. Every field of
    `MuZeroConfig` means what it means in the other runners:

    - every action is chosen by the builder's search (`acting.search_core`: Gumbel MuZero or pUCT, with the
      config's search fields), run by `mctx` inside the jitted iteration, vmapped over the environments; the
      search's `action_weights` and `root_value` are stored with each row;
    - sequences of `num_unroll_steps + n_step + 1` rows, one every `sequence_period` rows of each environment (a
      CONTINUE SequenceAdder's items), prioritized by `priority_exponent` with new sequences at priority 1.0 and
      each SGD step's value-error priorities written back; `max_replay_size` and `min_replay_size` in sequences;
      `samples_per_insert` held exactly (so `samples_per_insert_tolerance_rate` never matters; there is no
      `replay_table_name` table);
    - the update is `learning.make_update_step` (unroll, targets, Reanalyse, AdamW, target network), deciding once
      for every seed whether the target network's copy is due (`seeds_axis`), so the other steps do not copy it;
    - by default one environment per sequence an iteration inserts (2 with the defaults: one SGD step of 64
      sequences per 2 inserted, at 32 samples per insert), each environment writing `sequence_period` rows per
      sequence, and each with its own copy of the parameters fetched every `variable_update_period` of its
      actions (`StepStream`). The runner has no evaluator, so the evaluation search is not built.

    Observations are read flattened by the MLPs (gymnax's MinAtar frames, 10x10xC, included).
    """
    networks = make_networks(environment.spec, config)
    return builder_sequence_replay_agent("muzero", environment, config, MuZeroBuilder(config), networks, learning,
                                         num_envs=num_envs, loss_keys=learning.LOSS_KEYS)
