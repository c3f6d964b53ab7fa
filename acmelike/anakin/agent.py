"""AnakinAgent: an agent's fully jitted form, as pure functions of one seed.

Each agent that has one defines it in its own folder (`agents/<name>/anakin.py`) from its builder's policy and
its pure `update_step`, and names it in its `AgentDefinition(anakin=...)`. `launch.engines.anakin` vmaps it over
seeds and scans it:

    carry = agent.init(key)
    carry, outputs = agent.iteration(carry)      # collect `rows_per_env` rows per environment, then learn

`outputs.episode_return` and `outputs.real` are [rows_per_env, num_envs] (rows in order, environments within a
row), and so is each of `outputs.agent_returns`; `outputs.learned` and `outputs.metrics` (the update's scalars) have
no axis.

The runner vmaps `iteration` over seeds under the axis name `SEEDS_AXIS`. A branch on a value that is the same for
every seed (whether the replay holds enough to sample) should reduce it across that axis first: under vmap a
`lax.cond` on a per-seed value becomes a select that runs both branches, and copies whatever passes through them.
"""

import dataclasses
from typing import Any, Callable, Dict, NamedTuple, Tuple

import jax
import jax.numpy as jnp

from acmelike.types import SampleInfo


SEEDS_AXIS = "seeds"


class IterationOutputs(NamedTuple):
    episode_return: jax.Array  # [K, B]: the return of an episode that ended at that row, NaN elsewhere
    real: jax.Array  # [K, B] bool: that row was an environment step
    learned: jax.Array  # bool: the iteration updated the agent (DQN waits for min_replay_size)
    metrics: Dict[str, jax.Array]  # scalars of the iteration's learning
    # A multi-agent environment's: each agent's return where `episode_return` (the team's) has one, by agent id.
    agent_returns: Dict[str, jax.Array] = {}


@dataclasses.dataclass(frozen=True)
class AnakinAgent:
    """One agent's fully jitted form; `rows_per_iteration` environment steps (rows) per `iteration`."""

    name: str
    init: Callable[[jax.Array], Any]
    iteration: Callable[[Any], Any]  # carry -> (carry, IterationOutputs)
    num_envs: int
    rows_per_env: int  # rows each environment writes per iteration
    policy_params: Callable[[Any], Any]  # carry -> the acting policy's parameters
    config: Any
    loss_keys: Tuple[str, ...] = ("loss",)  # the metrics that must stay finite (every loss of the update)

    @property
    def rows_per_iteration(self) -> int:
        return self.num_envs * self.rows_per_env


def uniform_sample_info(size, batch: int) -> SampleInfo:
    """Uniform sampling: every item had probability 1 / size (importance weights all equal)."""
    size = jnp.maximum(jnp.asarray(size, jnp.float32), 1.0)
    return SampleInfo(
        key=jnp.zeros((batch,), jnp.int32),
        probability=jnp.full((batch,), 1.0, jnp.float32) / size,
        table_size=jnp.full((batch,), size, jnp.float32),
    )
