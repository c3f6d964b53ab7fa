"""The Anakin form of an agent that learns from replayed sequences of Steps with their stored recurrent state
(R2D2): `SequenceReplay`, an on-device sequence table, and `sequence_replay_agent`, which puts it between a
`StepStream` acting under the agent's policy and the agent's own pure `update_step`.

    replay = SequenceReplay.from_config(config, num_envs=4, rows_per_env=10)
    state = replay.init(example_row)                 # empty
    state = replay.add(state, rows)                  # Step rows [num_envs, rows_per_env], as StepStream writes them
    sample, where = replay.sample(state, key)        # ReplaySample of batch_size Step sequences [B, L]
    state = replay.set_priorities(state, where, priorities)

The table is what the agent's replay table is in the other runners, where a `SequenceAdder` that CONTINUEs across
episodes writes items of L = `sequence_length` rows every `sequence_period` rows (the windows [k p, k p + L) of each
environment's stream, padding rows included; `StepStream` writes the same rows). Field for field of the config:
- `max_replay_size` sequences kept (the newest, `max_replay_size / num_envs` of each environment; the number must
  divide), `min_replay_size` before the learner samples;
- `priority_exponent` > 0: prioritized sampling, P(i) = p_i^alpha / sum_j p_j^alpha, new sequences at priority
  1.0 (the adder's), each SGD step's `extras["priorities"]` written back before the next one samples; 0: uniform;
- `samples_per_insert`: every iteration inserts `num_envs * rows_per_env / sequence_period` sequences and samples
  `batch_size` per SGD step, exactly in that ratio (`sgd_steps_and_inserts` refuses a ratio that whole SGD steps
  and sequences cannot hold); held exactly, so `samples_per_insert_tolerance_rate` never comes into play, and
  there is no table for `replay_table_name` to name.

Rows are kept once, time-major in a `TrajectoryBuffer` (`max_length` a multiple of the period): sequence slot j of
an environment starts at its row j * period, and a sampled sequence is gathered from its L rows.
"""

import dataclasses
import math
from typing import Any, Callable, NamedTuple, Optional, Tuple

import jax
import jax.numpy as jnp

from acmelike.actors.actor_core import ActorCore
from acmelike.anakin.agent import SEEDS_AXIS, AnakinAgent, IterationOutputs
from acmelike.anakin.environment import JaxEnvironment
from acmelike.anakin.off_policy import learn_or_wait, raise_priorities, sample_in_proportion, sgd_steps
from acmelike.anakin.streams import StepStream
from acmelike.anakin.trajectory_buffer import TrajectoryBuffer, TrajectoryBufferState
from acmelike.types import ReplaySample


class SequenceReplayState(NamedTuple):
    buffer: TrajectoryBufferState
    rows: jax.Array  # int32 []: rows written per environment since the start
    priorities: Optional[jax.Array]  # [slots, num_envs]: priority ** priority_exponent of each slot's; uniform: None


class Sampled(NamedTuple):
    """Which sequences a sample holds (for `set_priorities`)."""

    slots: jax.Array  # [batch] int32
    envs: jax.Array  # [batch] int32


def sgd_steps_and_inserts(config) -> Tuple[int, int]:
    """(SGD steps, sequences inserted) per iteration: the fewest SGD steps of `batch_size` whose samples are a whole
    number of inserted sequences at exactly `samples_per_insert`; ValueError naming the field if none of up to
    `batch_size` SGD steps gives one."""
    for steps in range(1, max(config.batch_size, math.ceil(config.samples_per_insert)) + 1):
        inserts = steps * config.batch_size / config.samples_per_insert
        if inserts >= 1 and abs(inserts - round(inserts)) < 1e-9:
            return steps, round(inserts)
    per_step = config.batch_size / config.samples_per_insert
    raise ValueError(
        f"Anakin holds samples_per_insert exactly, in whole SGD steps of batch_size={config.batch_size} and whole "
        f"sequences: samples_per_insert={config.samples_per_insert} gives {per_step} sequences per SGD step. Choose "
        f"samples_per_insert = k * batch_size / n, k SGD steps per n sequences inserted, k <= batch_size (e.g. "
        f"samples_per_insert={config.batch_size / max(1, round(per_step))})."
    )


@dataclasses.dataclass(frozen=True)
class SequenceReplay:
    """Sequences of `length` rows starting every `period` rows of each of `buffer.num_envs` streams; the newest
    `sequences_per_env` whole ones of each stream are held.

    Attributes:
      buffer: the rows, time-major; `max_length` is a multiple of `period`.
      length: rows per sequence (burn-in + trace + 1 for R2D2).
      period: rows between the starts of consecutive sequences of one stream.
      sequences_per_env: sequences held per stream (`max_replay_size / num_envs`).
      min_size: sequences held in all before `can_sample` holds.
      batch_size: sequences per sample.
      priority_exponent: alpha of prioritized sampling; 0: uniform.
    """

    buffer: TrajectoryBuffer
    length: int
    period: int
    sequences_per_env: int
    min_size: int
    batch_size: int
    priority_exponent: float = 0.0

    @classmethod
    def from_config(cls, config, num_envs: int, rows_per_env: int) -> "SequenceReplay":
        """The replay an R2D2-style config describes (`sequence_length`, `sequence_period`, `max_replay_size`,
        `min_replay_size`, `batch_size`, `priority_exponent`) for `num_envs` streams of `rows_per_env` rows per
        iteration; ValueError naming `max_replay_size` if the streams cannot share it evenly."""
        if config.max_replay_size % num_envs:
            raise ValueError(
                f"Anakin keeps max_replay_size={config.max_replay_size} sequences as the newest of each of its "
                f"{num_envs} environments, so it must be a multiple of {num_envs} (e.g. "
                f"max_replay_size={num_envs * max(1, round(config.max_replay_size / num_envs))})."
            )
        length, period = config.sequence_length, config.sequence_period
        held = config.max_replay_size // num_envs
        # The newest `held` whole sequences span at most (held - 1) * period + (period - 1) + length rows.
        slots = held + math.ceil((length - 1) / period)
        buffer = TrajectoryBuffer(max_length=max(slots * period, rows_per_env), num_envs=num_envs,
                                  sequence_length=length, min_length=length)
        return cls(buffer, length, period, held, config.min_replay_size, config.batch_size, config.priority_exponent)

    def __post_init__(self):
        if self.buffer.max_length % self.period:
            raise ValueError(f"SequenceReplay: the buffer's max_length ({self.buffer.max_length}) must be a multiple "
                             f"of the sequence period ({self.period}).")

    @property
    def prioritized(self) -> bool:
        return self.priority_exponent > 0

    @property
    def num_slots(self) -> int:
        return self.buffer.max_length // self.period

    def init(self, example_row: Any) -> SequenceReplayState:
        """An empty replay for rows shaped like `example_row` (one environment's Step row)."""
        priorities = jnp.ones((self.num_slots, self.buffer.num_envs), jnp.float32) if self.prioritized else None
        return SequenceReplayState(self.buffer.init(example_row), jnp.zeros((), jnp.int32), priorities)

    def add(self, state: SequenceReplayState, rows: Any) -> SequenceReplayState:
        """Writes `rows` ([num_envs, L], L a multiple of the period); the sequences starting at them get priority
        1.0 (they are sampled only once whole)."""
        length = jax.tree_util.tree_leaves(rows)[0].shape[1]
        if length % self.period:
            raise ValueError(f"SequenceReplay.add: {length} rows per environment are not a multiple of the sequence "
                             f"period {self.period}.")
        buffer = self.buffer.add(state.buffer, rows)
        priorities = state.priorities
        if self.prioritized:
            first = state.buffer.write_index // self.period
            priorities = priorities.at[(first + jnp.arange(length // self.period)) % self.num_slots].set(1.0)
        return SequenceReplayState(buffer, state.rows + length, priorities)

    def held(self, state: SequenceReplayState) -> jax.Array:
        """[slots] bool: the slot's sequence is whole and among the newest `sequences_per_env` of its stream."""
        rows = state.rows
        positions = jnp.arange(self.num_slots) * self.period
        start = rows - 1 - (rows - 1 - positions) % self.buffer.max_length  # the newest row written at the slot
        newest_possible = rows - self.length
        too_old = newest_possible - self.sequences_per_env * self.period  # starts up to here are not held
        return (start >= 0) & (start <= newest_possible) & (start > too_old)

    def size(self, state: SequenceReplayState) -> jax.Array:
        return jnp.sum(self.held(state)) * self.buffer.num_envs

    def can_sample(self, state: SequenceReplayState) -> jax.Array:
        return self.size(state) >= self.min_size

    def sample(self, state: SequenceReplayState, key: jax.Array):
        """`batch_size` sequences (Step rows [batch, length]): returns (ReplaySample, Sampled). Call only where
        `can_sample` holds."""
        num_envs = self.buffer.num_envs
        weights = state.priorities if self.prioritized else jnp.ones((self.num_slots, num_envs), jnp.float32)
        flat, info = sample_in_proportion(key, weights, self.held(state)[:, None], self.batch_size)
        slots, envs = flat // num_envs, flat % num_envs
        times = (slots[:, None] * self.period + jnp.arange(self.length)) % self.buffer.max_length
        rows = jax.tree_util.tree_map(lambda stored: stored[times, envs[:, None]], state.buffer.experience)
        return ReplaySample(info=info, data=rows), Sampled(slots, envs)

    def set_priorities(self, state: SequenceReplayState, where: Sampled, priorities: jax.Array) -> SequenceReplayState:
        """The sampled sequences' new priorities (uniform replay keeps none)."""
        if not self.prioritized:
            return state
        return state._replace(priorities=state.priorities.at[where.slots, where.envs].set(
            raise_priorities(priorities, self.priority_exponent)))


def sequence_replay_agent(name: str, environment: JaxEnvironment, config, policy: ActorCore,
                          init_training_state: Callable[[jax.Array], Any], update_step,
                          policy_params: Callable[[Any], Any], num_envs: Optional[int] = None,
                          loss_keys: Tuple[str, ...] = ("loss",), variable_update_period: int = 1) -> AnakinAgent:
    """The Anakin form of an agent that learns from a `SequenceReplay` of its config (R2D2's fields: see the module
    docstring): `policy` acts in a `StepStream` (its recurrent state carried from row to row and reset at each
    episode's start, its extras, e.g. `core_state`, stored with each row), the rows go into the replay, and, once it
    holds `min_replay_size` sequences, SGD steps of `update_step(state, sample) -> (state, metrics, extras)` each
    learn from their own batch (writing `extras["priorities"]` back if prioritized).

    Per iteration: `sgd_steps_and_inserts(config)` gives the SGD steps and the sequences inserted; `num_envs`
    (None: one per inserted sequence) must divide those sequences, and each environment writes `sequence_period`
    rows per sequence it inserts. `policy` is called with `policy_params(training_state)`, each environment's
    actor with its own copy, fetched every `variable_update_period` of its actions (`StepStream`).
    """
    steps_per_iteration, inserts = sgd_steps_and_inserts(config)
    num_envs = num_envs or inserts
    if inserts % num_envs:
        raise ValueError(
            f"{name}'s Anakin form: {num_envs} environments cannot share the {inserts} sequences an iteration inserts "
            f"(batch_size / samples_per_insert per SGD step): choose a divisor of {inserts}, or change "
            f"samples_per_insert."
        )
    rows_per_env = inserts // num_envs * config.sequence_period
    stream = StepStream(environment, policy, variable_update_period)
    replay = SequenceReplay.from_config(config, num_envs, rows_per_env)

    def init(key):
        learner_key, stream_key, key = jax.random.split(key, 3)
        training_state = init_training_state(learner_key)
        stream_state = stream.init(stream_key, num_envs, policy_params(training_state))
        # The shapes of one environment's row, without tracing the policy into `init`.
        example = jax.eval_shape(stream.next_row, stream_state)
        replay_state = replay.init(jax.tree_util.tree_map(lambda x: jnp.zeros(x.shape[1:], x.dtype), example))
        return training_state, stream_state, replay_state, key

    def iteration(carry):
        training_state, stream_state, replay_state, key = carry
        key, unroll_key, sample_key = jax.random.split(key, 3)
        stream_state, rows, outputs = stream.unroll(policy_params(training_state), stream_state, unroll_key,
                                                    rows_per_env)
        replay_state = replay.add(replay_state, rows)
        keys = jax.random.split(sample_key, steps_per_iteration)
        learned, (training_state, priorities), metrics = learn_or_wait(
            replay.can_sample(replay_state), lambda carry: sgd_steps(replay, update_step, replay_state, carry, keys),
            (training_state, replay_state.priorities))
        replay_state = replay_state._replace(priorities=priorities)
        metrics = {metric: jnp.mean(value) for metric, value in metrics.items()}
        outputs = IterationOutputs(outputs.episode_return, outputs.real, learned, metrics)
        return (training_state, stream_state, replay_state, key), outputs

    return AnakinAgent(name, init, iteration, num_envs, rows_per_env, lambda carry: policy_params(carry[0]), config,
                       loss_keys=loss_keys)


def builder_sequence_replay_agent(name: str, environment: JaxEnvironment, config, builder, networks, learning,
                                  num_envs: Optional[int] = None, loss_keys: Tuple[str, ...] = ("loss",)
                                  ) -> AnakinAgent:
    """`sequence_replay_agent` for an agent whose builder makes its acting policy and whose learning module holds
    its pure pieces (R2D2, MuZero): `builder.make_policy(networks=..., environment_spec=...)` acts, each
    environment's actor with its own copy of the training state's `params`, fetched every
    `config.variable_update_period` of its actions; `learning.init_training_state(networks, config, key)` and
    `learning.make_update_step(networks, config, seeds_axis=SEEDS_AXIS)` learn (the update step takes its periodic
    decisions, e.g. the target network's copy, once for every seed, so they stay branches)."""
    return sequence_replay_agent(
        name, environment, config,
        policy=builder.make_policy(networks=networks, environment_spec=environment.spec),
        init_training_state=lambda key: learning.init_training_state(networks, config, key),
        update_step=learning.make_update_step(networks, config, seeds_axis=SEEDS_AXIS),
        policy_params=lambda state: state.params,
        num_envs=num_envs,
        loss_keys=loss_keys,
        variable_update_period=config.variable_update_period,
    )
