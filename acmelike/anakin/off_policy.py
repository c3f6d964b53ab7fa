"""The Anakin form of an agent that learns from n-step transition replay (DQN, SAC, TD3, D4PG, MPO): one
on-device replay, `TransitionReplay`, and `off_policy_agent`, which puts it between the agent's policy and its
own pure `update_step`.

    replay = TransitionReplay.from_config(config, num_envs=4, rows_per_env=8, priority_exponent=0.6)
    state = replay.init(example_record)                  # empty
    state = replay.add(state, records)                   # StepRecords [num_envs, rows_per_env]
    sample, where = replay.sample(state, key)            # ReplaySample of batch_size n-step Transitions
    state = replay.set_priorities(state, where, priorities)   # prioritized replay: the update's new priorities

The replay is what the agent's replay table is in the other runners, field for field of its config:
- `max_replay_size` transitions kept, `min_replay_size` before the learner samples;
- `n_step` and `discount` as the `NStepTransitionAdder` writes them (`n_step_transitions`), episode ends included;
- `priority_exponent` > 0 (DQN's and D4PG's field of that name): prioritized sampling, P(i) = p_i^alpha /
  sum_j p_j^alpha, new transitions at priority 1.0 (the adder's), each SGD step's `extras["priorities"]` written
  back before the next SGD step samples (the table keeps p_i^alpha, raised as each is written, so a draw costs no
  power over the whole table); `sample.info.probability` is P(i), so the update's importance weights
  (`importance_sampling_exponent`) correct it as they correct Reverb's. 0 (D4PG's default; SAC, TD3 and MPO have
  no such field): uniform;
- `samples_per_insert`: every iteration inserts `num_envs * rows_per_env` transitions and samples
  `num_sgd_steps_per_step * batch_size`, and the two must be in exactly that ratio (`inserts_per_iteration`
  refuses a config where whole rows cannot hold it). The ratio is held exactly, so `samples_per_insert_tolerance_rate`
  (the rate limiter's slack) never comes into play, and there is no table for `replay_table_name` to name.
"""

import dataclasses
import math
from typing import Any, Callable, NamedTuple, Optional

import jax
import jax.numpy as jnp

from acmelike.anakin.agent import SEEDS_AXIS, AnakinAgent, IterationOutputs, uniform_sample_info
from acmelike.anakin.environment import JaxEnvironment
from acmelike.anakin.trajectory_buffer import TrajectoryBuffer, TrajectoryBufferState
from acmelike.anakin.transitions import TransitionRecorder, n_step_transitions
from acmelike.types import ReplaySample, SampleInfo


class ReplayState(NamedTuple):
    buffer: TrajectoryBufferState
    # [max_length, num_envs]: the priority ** priority_exponent of the transition starting at each step; uniform: None
    priorities: Optional[jax.Array]


class Sampled(NamedTuple):
    """Where a sample's transitions start in the buffer (for `set_priorities`)."""

    times: jax.Array  # [batch] int32
    envs: jax.Array  # [batch] int32


def _block_size(num_items: int) -> int:
    """Items per block of `sample_in_proportion`'s two-level draw: about the cube root of `num_items` (a block's
    cumulative sum per draw, and the blocks' over the table, both stay short), a divisor of it when one lies within
    a factor 2 (the table is cut without padding)."""
    target = max(1, round(num_items ** (1 / 3)))
    for size in sorted(range(max(1, target // 2), 2 * target + 1), key=lambda size: abs(size - target)):
        if num_items % size == 0:
            return size
    return target


def sample_in_proportion(key: jax.Array, weights: jax.Array, held: jax.Array, batch: int):
    """`batch` items drawn with replacement as Reverb's prioritized table draws them: item i (of `weights`'
    entries, flattened; `held` broadcasts to their shape) with probability w_i / sum_j w_j over the held items,
    where w_i = p_i^alpha, raised once as each priority is written (`raise_priorities`), not over the whole table at
    every draw; uniform over the held items if every weight is 0. Returns (flat indices [batch], SampleInfo).

    The inverse CDF is taken in two levels, as a sum tree would: the items are cut into blocks of about the cube
    root of their number, a draw picks its block from the running total of the blocks' sums, then its item from
    that block's running total. A running total of the whole table was most of the sampler's time, and the
    sampler much of a prioritized agent's fully jitted iteration: on DQN's 100k-transition table, two levels
    draw 64 items in 0.37x the time (a loop of 2,000 draws, both in one run)."""
    num_items = weights.size
    flat_weights = jnp.where(held, weights, 0.0).reshape(-1)
    flat_held = jnp.broadcast_to(held, weights.shape).reshape(-1).astype(flat_weights.dtype)
    size = _block_size(num_items)
    num_blocks = -(-num_items // size)

    def blocks(flat):
        return jnp.pad(flat, (0, num_blocks * size - num_items)).reshape(num_blocks, size)

    weight_blocks, held_blocks = blocks(flat_weights), blocks(flat_held)
    weight_totals, held_totals = jnp.sum(weight_blocks, 1), jnp.sum(held_blocks, 1)
    weight_cumulative = jnp.cumsum(weight_totals)
    uniform = weight_cumulative[-1] <= 0  # every held weight is 0: draw the held items alike
    block_totals = jnp.where(uniform, held_totals, weight_totals)
    cumulative = jnp.where(uniform, jnp.cumsum(held_totals), weight_cumulative)
    total = cumulative[-1]
    points = jax.random.uniform(key, (batch,), maxval=total)
    block = jnp.minimum(jnp.searchsorted(cumulative, points, side="right"), num_blocks - 1)
    within = points - (cumulative[block] - block_totals[block])
    rows = jnp.where(uniform, held_blocks[block], weight_blocks[block])  # [batch, size]
    offset = jnp.minimum(jnp.sum(jnp.cumsum(rows, 1) <= within[:, None], 1), size - 1)
    drawn = jnp.minimum(block * size + offset, num_items - 1)

    def weight_of(indices):
        return jnp.where(uniform, flat_held[indices], flat_weights[indices])

    # XLA sums `cumsum` as a tree, so in float32 a running total need not be monotone and an item of weight 0 can
    # own a sliver of it (322 of 19,916 zero weights among 100k; 8 draws in 1M landed on one), as can a point
    # that rounding puts past its block's end. That item is not held, and its probability 0 makes its importance
    # weight infinite (MuZero's fully jitted loss on MinAtar Breakout became NaN after 11.7k updates). Such a draw
    # repeats the batch's first valid draw: a bias of a few draws in a million, at the batch's cost. A batch
    # whose every draw fell on a sliver keeps them (about 1e-5 to the power of the batch size).
    valid = weight_of(drawn) > 0
    flat = jnp.where(valid, drawn, drawn[jnp.argmax(valid)])
    info = SampleInfo(
        key=flat.astype(jnp.int32),
        probability=weight_of(flat) / total,
        table_size=jnp.full((batch,), jnp.sum(held_totals), jnp.float32),
    )
    return flat, info


def raise_priorities(priorities: jax.Array, exponent: float) -> jax.Array:
    """p^alpha, the sampling weight a prioritized replay keeps for priority p (0 for p <= 0, as Reverb's)."""
    return jnp.where(priorities > 0, priorities ** exponent, 0.0)


@dataclasses.dataclass(frozen=True)
class TransitionReplay:
    """n-step transitions of `num_envs` environments on the device, sampled uniformly or by priority.

    Attributes:
      buffer: the steps, time-major (`TrajectoryBuffer`, sequences of `n_step` steps).
      discount: gamma per step, folded into each transition's discount.
      batch_size: transitions per sample.
      priority_exponent: alpha of prioritized sampling; 0: uniform.
    """

    buffer: TrajectoryBuffer
    discount: float
    batch_size: int
    priority_exponent: float = 0.0

    @classmethod
    def from_config(cls, config, num_envs: int, rows_per_env: int, priority_exponent: float = 0.0
                    ) -> "TransitionReplay":
        """The replay an off-policy config describes (`max_replay_size`, `min_replay_size`, `n_step`, `discount`,
        `batch_size`), for `num_envs` environments writing `rows_per_env` steps each per iteration."""
        n = config.n_step
        time_axis = max(config.max_replay_size // num_envs, n + rows_per_env)  # steps kept per environment
        buffer = TrajectoryBuffer(
            max_length=time_axis,
            num_envs=num_envs,
            sequence_length=n,
            min_length=min(time_axis, max(n, math.ceil(config.min_replay_size / num_envs))),
        )
        return cls(buffer, config.discount, config.batch_size, priority_exponent)

    @property
    def prioritized(self) -> bool:
        return self.priority_exponent > 0

    def init(self, example_record: Any) -> ReplayState:
        """An empty replay for records shaped like `example_record` (one environment's step)."""
        shape = (self.buffer.max_length, self.buffer.num_envs)
        priorities = jnp.ones(shape, jnp.float32) if self.prioritized else None
        return ReplayState(self.buffer.init(example_record), priorities)

    def add(self, state: ReplayState, records: Any) -> ReplayState:
        """Writes `records` ([num_envs, L]); the transitions starting at them get priority 1.0."""
        buffer = self.buffer.add(state.buffer, records)
        if not self.prioritized:
            return ReplayState(buffer, None)
        length = jax.tree_util.tree_leaves(records)[0].shape[1]
        times = (state.buffer.write_index + jnp.arange(length)) % self.buffer.max_length
        return ReplayState(buffer, state.priorities.at[times].set(1.0))  # 1.0 ** alpha

    def can_sample(self, state: ReplayState) -> jax.Array:
        return self.buffer.can_sample(state.buffer)

    def sample(self, state: ReplayState, key: jax.Array):
        """`batch_size` n-step transitions: returns (ReplaySample, Sampled). Call only where `can_sample` holds."""
        if not self.prioritized:
            records = self.buffer.sample(state.buffer, key, self.batch_size)
            num_items = self.buffer.size(state.buffer) * self.buffer.num_envs
            info = uniform_sample_info(num_items, self.batch_size)
            return ReplaySample(info=info, data=n_step_transitions(records, self.discount)), None
        max_length, num_envs, n = self.buffer.max_length, self.buffer.num_envs, self.buffer.sequence_length
        # The transitions held whole: those starting at the oldest `size - n + 1` steps of each environment.
        oldest = jnp.where(state.buffer.is_full, state.buffer.write_index, 0)
        age = (jnp.arange(max_length) - oldest) % max_length
        held = (age < self.buffer.size(state.buffer) - n + 1)[:, None]
        flat, info = sample_in_proportion(key, state.priorities, held, self.batch_size)
        times, envs = flat // num_envs, flat % num_envs
        steps = (times[:, None] + jnp.arange(n)) % max_length
        records = jax.tree_util.tree_map(lambda stored: stored[steps, envs[:, None]], state.buffer.experience)
        return ReplaySample(info=info, data=n_step_transitions(records, self.discount)), Sampled(times, envs)

    def set_priorities(self, state: ReplayState, where: Optional[Sampled], priorities: jax.Array) -> ReplayState:
        """The sampled transitions' new priorities (uniform replay keeps none)."""
        if not self.prioritized:
            return state
        return state._replace(priorities=state.priorities.at[where.times, where.envs].set(
            raise_priorities(priorities, self.priority_exponent)))


def inserts_per_iteration(config) -> int:
    """Transitions one iteration inserts so that it samples `num_sgd_steps_per_step * batch_size` at exactly
    `samples_per_insert`; ValueError naming the fields if that is not a whole number."""
    samples = config.num_sgd_steps_per_step * config.batch_size
    inserts = samples / config.samples_per_insert
    if inserts < 1 or abs(inserts - round(inserts)) > 1e-9:
        nearest = min((k for k in range(1, samples + 1) if samples % k == 0), key=lambda k: abs(k - inserts))
        raise ValueError(
            f"Anakin holds samples_per_insert exactly: each iteration makes num_sgd_steps_per_step * batch_size = "
            f"{samples} samples, so samples_per_insert={config.samples_per_insert} must divide it into a whole number "
            f"of transitions per iteration (e.g. samples_per_insert={samples / nearest}: {nearest} per iteration)."
        )
    return round(inserts)


def environments_and_rows(name: str, config, num_envs: Optional[int]):
    """(environments, rows each writes per iteration) for `inserts_per_iteration(config)` transitions per
    iteration: `num_envs` None gives one environment per inserted transition (each writes one row), else
    `num_envs` must divide the inserts (ValueError naming the fields otherwise)."""
    inserts = inserts_per_iteration(config)
    num_envs = num_envs or inserts
    if inserts % num_envs:
        raise ValueError(
            f"{name}'s Anakin form: {num_envs} environments cannot share the {inserts} transitions an iteration "
            f"inserts (num_sgd_steps_per_step * batch_size / samples_per_insert) in whole rows: choose a divisor "
            f"of {inserts}, or change samples_per_insert."
        )
    return num_envs, inserts // num_envs


def sgd_steps(replay: TransitionReplay, update_step, replay_state: ReplayState, carry, keys):
    """One SGD step per key, each on its own batch sampled from `replay_state` (its priorities written back
    before the next step samples, if prioritized): `carry` = (training_state, priorities) -> (carry, metrics
    [steps]). Only `carry` changes, so only it need pass through a branch."""
    if not replay.prioritized:
        # A uniform replay is the same for every step, so each key's batch is drawn up front: the batches the
        # steps would draw, one vmapped gather for all. Drawn inside the scan, they cost SAC's fully jitted run on
        # gymnax Pendulum 1.12x this one's CPU time (median of 6 alternating pairs, benchmarks/anakin_sac.py's setup).
        samples = jax.vmap(lambda key: replay.sample(replay_state, key)[0])(keys)

        def uniform_step(carry, sample):
            training_state, priorities = carry
            training_state, metrics, _ = update_step(training_state, sample)
            return (training_state, priorities), metrics

        return jax.lax.scan(uniform_step, carry, samples)

    def sgd_step(carry, key):
        training_state, priorities = carry
        sample, where = replay.sample(replay_state._replace(priorities=priorities), key)
        training_state, metrics, extras = update_step(training_state, sample)
        priorities = replay.set_priorities(replay_state._replace(priorities=priorities), where,
                                           extras["priorities"]).priorities
        return (training_state, priorities), metrics

    return jax.lax.scan(sgd_step, carry, keys)


def learn_or_wait(can_sample: jax.Array, learn, carry):
    """`learn(carry) -> (carry, metrics)` if every seed's replay can sample, else `carry` unchanged and NaN
    metrics: returns (learned, carry, metrics). Every seed's replay holds as much as the others' (the same rows
    per iteration), so `can_sample` is reduced across the seeds axis and the branch stays a branch."""

    learn = jax.jit(learn)  # traced once: `wait` reads its shapes from the trace the branch then reuses

    def wait(carry):
        metrics = jax.eval_shape(learn, carry)[1]
        return carry, jax.tree_util.tree_map(lambda m: jnp.full(m.shape, jnp.nan, m.dtype), metrics)

    learned = jax.lax.pmin(can_sample, SEEDS_AXIS)
    return (learned,) + tuple(jax.lax.cond(learned, learn, wait, carry))


def off_policy_agent(name: str, environment: JaxEnvironment, builder, networks, num_envs: Optional[int] = None,
                     priority_exponent: float = 0.0, update_step: Optional[Callable] = None) -> AnakinAgent:
    """The Anakin form of an agent that learns from n-step transition replay, from its builder: the builder's
    policy (`make_policy`) and learning step (`learning_parts`: the agent's own `update_step`, its losses and
    where its policy parameters are), around a `TransitionReplay` of `builder.config`.

    Each iteration, `num_envs` environments act `rows_per_env` steps under the policy (the actors' parameters
    fetched from the learner every `config.variable_update_period` steps of each environment), the steps go into
    the replay, and, once it holds `min_replay_size` transitions, `num_sgd_steps_per_step` SGD steps each learn
    from their own sampled batch (writing priorities back if prioritized). Per iteration `num_envs *
    rows_per_env` transitions go in for `num_sgd_steps_per_step * batch_size` sampled, exactly
    `samples_per_insert` (`inserts_per_iteration`); `num_envs` None: one environment per inserted transition
    (each writes one row), else it must divide the inserts. `priority_exponent` > 0: prioritized replay (the
    agent's config field of that name), and the update must return `extras["priorities"]`. `update_step`: the
    agent's own update step made for the seeds axis (TD3's, which takes its policy-delay branch once for every
    seed), in place of the builder's.
    """
    config = builder.config
    num_envs, rows_per_env = environments_and_rows(name, config, num_envs)

    def learning_parts(key):
        return builder.learning_parts(networks=networks, environment_spec=environment.spec, random_key=key)

    parts = learning_parts(jax.random.PRNGKey(0))  # its update step, losses and policy parameters (not its state)
    update_step, policy_params = update_step or parts.update_step, parts.policy_params
    policy = builder.make_policy(networks=networks, environment_spec=environment.spec)
    recorder = TransitionRecorder(environment, policy, config.variable_update_period)
    replay = TransitionReplay.from_config(config, num_envs, rows_per_env, priority_exponent)

    def init(key):
        learner_key, recorder_key, key = jax.random.split(key, 3)
        training_state = learning_parts(learner_key).state
        params = policy_params(training_state)
        recorder_state = recorder.init(recorder_key, num_envs, params)
        # The shapes of one environment's record, without compiling a step into `init`.
        example = jax.eval_shape(recorder.record, params, recorder_state, key)[1]
        replay_state = replay.init(jax.tree_util.tree_map(lambda x: jnp.zeros(x.shape[1:], x.dtype), example))
        return training_state, recorder_state, replay_state, key

    def iteration(carry):
        training_state, recorder_state, replay_state, key = carry
        key, unroll_key, sample_key = jax.random.split(key, 3)
        recorder_state, records, ends = recorder.unroll(
            policy_params(training_state), recorder_state, unroll_key, rows_per_env
        )
        replay_state = replay.add(replay_state, records)
        keys = jax.random.split(sample_key, config.num_sgd_steps_per_step)
        learned, (training_state, priorities), metrics = learn_or_wait(
            replay.can_sample(replay_state), lambda carry: sgd_steps(replay, update_step, replay_state, carry, keys),
            (training_state, replay_state.priorities))
        replay_state = replay_state._replace(priorities=priorities)
        metrics = {metric: jnp.mean(value) for metric, value in metrics.items()}
        outputs = IterationOutputs(ends.team, jnp.ones_like(ends.team, bool), learned, metrics)
        return (training_state, recorder_state, replay_state, key), outputs

    return AnakinAgent(name, init, iteration, num_envs, rows_per_env, lambda carry: policy_params(carry[0]), config,
                       loss_keys=tuple(parts.loss_keys))
