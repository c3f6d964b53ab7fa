"""NStepTransitionAdder: one n-step `Transition` item per environment step."""

import collections
from typing import Sequence, Union

import jax
import numpy as np

from acmelike.adders._writer import PriorityFns, ReverbAdder, as_float32, tensor_spec
from acmelike.types import NestedSpec, Transition


# Reward/discount types summed as Python floats (float64); anything else (arrays, nests) goes through NumPy.
_SCALARS = frozenset({float, int, np.float16, np.float32, np.float64, np.int32, np.int64})


def _at(column_nest, index):
    """`column[index]` for every column of a (possibly nested) history entry."""
    if isinstance(column_nest, (dict, list, tuple)):
        return jax.tree_util.tree_map(lambda column: column[index], column_nest)
    return column_nest[index]


class NStepTransitionAdder(ReverbAdder):
    """Writes n-step transitions (Sutton & Barto, 2018, ch. 7) to Reverb, one per environment step.

    With r_t, d_t the reward and discount of the timestep returned after action a_t, gamma = `discount`, and
    m = min(n_step, steps left in the episode), the item for start step s is the Transition (no time axis):

        observation      = o_s                     action = a_s          extras = extras_s
        reward           = sum_{k<m} gamma^k (prod_{j<k} d_{s+j}) r_{s+k}     float32, reward spec shape(s)
        discount         = gamma^m prod_{k<m} d_{s+k}                          float32, discount spec shape
        next_observation = o_{s+m}

    `discount` is the *total* discount, so a TD target is `reward + discount * v(next_observation)`. Windows are
    shorter than n only at the episode end: a termination (d = 0) gives discount 0, a truncation (dm_env
    discount 1 on the last step) gives gamma^m * prod(d). Episodes shorter than n give shorter windows only.
    Rewards may be nested (one n-step return per leaf); the discount is one array, broadcast against them.

    Storage: one complete writer row per step (one `append`, the writer's dominant cost). Row t holds o_t, the
    action a_{t-1} and extras_{t-1} that led to it and, in two extra columns, the reward and discount of the
    window that o_t completes (start t - n); row 0 holds o_0 only. Items only reference cells, so each
    observation is stored once. At the episode end the windows still open (up to n - 1) get their reward and
    discount in rows of their own after the final observation's row. An item spans at most n + 1 rows.
    """

    def __init__(
        self,
        *,
        client,
        table_names: Union[str, Sequence[str]],
        n_step: int,
        discount: float,
        priority_fns: PriorityFns = None,
        max_in_flight_items: int = 5,
    ):
        """Args:
        client: a `reverb.Client`.
        table_names: the tables each transition is inserted into.
        n_step: the largest number of environment steps a transition spans, >= 1.
        discount: the agent's gamma, in [0, 1].
        priority_fns: table name -> callable(Transition of numpy arrays) -> float; priority 1.0 where absent.
        max_in_flight_items: items allowed to wait unconfirmed by the server after each add. 0 makes every
            item sampleable before `add` returns, but forces a chunk and a server round trip per step (about
            half the throughput of 5 on the 2-core machine). None never flushes mid-episode: items arrive as the
            writer's chunks fill (about 10% faster again, with no bound on the delay).
        """
        if n_step < 1:
            raise ValueError(f"NStepTransitionAdder: n_step must be >= 1, got {n_step}.")
        if not 0.0 <= discount <= 1.0:
            raise ValueError(f"NStepTransitionAdder: discount must be in [0, 1], got {discount}.")
        super().__init__(
            client=client,
            table_names=table_names,
            priority_fns=priority_fns,
            num_keep_alive_refs=n_step + 1,
            max_in_flight_items=max_in_flight_items,
        )
        self._n = n_step
        self._gamma = float(discount)
        self._history = None
        self._clear()

    def _clear(self):
        self._t = 0  # index of the row holding the latest observation
        self._first_open = 0  # first start step whose transition is not written yet
        self._rewards = collections.deque(maxlen=self._n)  # r_t and d_t of the last n steps, as float64
        self._discounts = collections.deque(maxlen=self._n)

    def _begin(self, timestep):
        self._writer.append({"observation": timestep.observation})

    def _window(self, start: int):
        """Reward and total discount of the window from `start` to the latest observation (at most n steps)."""
        offset = self._t - start  # window length m
        rewards = list(self._rewards)[-offset:]
        discounts = list(self._discounts)[-offset:]
        gamma = self._gamma
        if all(type(r) is float for r in rewards) and all(type(d) is float for d in discounts):
            # Scalar rewards and discounts (the common case): Python floats are float64, as below.
            total, weight = 0.0, 1.0
            for r, d in zip(rewards, discounts):
                total += weight * r
                weight = weight * gamma * d  # the same association as below
            return {"n_step_reward": np.float32(total), "n_step_discount": np.float32(weight)}
        weights = [np.float64(1.0)]
        for discount in discounts:
            weights.append(weights[-1] * gamma * discount)
        total_reward = jax.tree_util.tree_map(
            lambda *rs: sum(weight * r for weight, r in zip(weights, rs)), *rewards  # rewards may be nested
        )
        return {"n_step_reward": as_float32(total_reward), "n_step_discount": as_float32(weights[-1])}

    def _history_view(self):
        """`writer.history`, kept once every column exists (after the first row with the n-step columns).

        `writer.history` rebuilds its nest of column views on every access; the views themselves are live (they
        follow later appends and are cleared in place by `end_episode`), so once no new column can appear the
        nest can be kept. Rows only ever hold observation, action, extras (fixed structure) and the n-step sums.
        """
        if self._history is not None:
            return self._history
        history = self._writer.history
        if "n_step_reward" in history and "action" in history:
            self._history = history
        return history

    def _write_transition(self, history, start: int):
        """An item for `start`: its action and extras are in row start + 1, its reward/discount in the last row."""
        trajectory = Transition(
            observation=_at(history["observation"], start),
            action=_at(history["action"], start + 1),
            reward=_at(history["n_step_reward"], -1),
            discount=history["n_step_discount"][-1],
            next_observation=_at(history["observation"], self._t),
            extras=_at(history.get("extras", ()), start + 1),
        )
        self._create_items(trajectory)
        self._first_open = start + 1

    def _step(self, action, next_timestep, extras):
        reward, discount = next_timestep.reward, next_timestep.discount
        if type(reward) in _SCALARS:
            self._rewards.append(float(reward))
        else:
            self._rewards.append(jax.tree_util.tree_map(lambda r: np.asarray(r, np.float64), reward))
        self._discounts.append(float(discount) if type(discount) in _SCALARS else np.asarray(discount, np.float64))
        self._t += 1
        start = self._t - self._n  # the start whose full n-step window this step completes
        # A flat row: reverb flattens every appended nest in Python, so each level of nesting costs per step.
        row = {"observation": next_timestep.observation, "action": action}
        if not (type(extras) is tuple and not extras):  # no column for empty extras
            row["extras"] = extras
        if start >= 0:
            row.update(self._window(start))
        writer = self._writer
        writer.append(row)  # row t, complete
        if start >= 0:
            self._write_transition(self._history_view(), start)
        if next_timestep.last():
            # Windows cut short by the episode end; each gets its reward/discount in a row of its own after the
            # final observation's row. None of them reference more than n + 1 rows back.
            for start in range(self._first_open, self._t):
                writer.append(self._window(start))
                self._write_transition(self._history_view(), start)
            self._end_episode(clear_buffers=True)
            self._clear()

    @staticmethod
    def signature(environment_spec, extras_spec: NestedSpec = ()) -> Transition:
        """The tf.TensorSpec tree of one item: a Transition without time axis; reward and discount float32."""
        import tensorflow as tf  # lazy: importing acmelike.adders must not import TensorFlow

        observation = jax.tree_util.tree_map(tensor_spec, environment_spec.observations)
        return Transition(
            observation=observation,
            action=jax.tree_util.tree_map(tensor_spec, environment_spec.actions),
            reward=jax.tree_util.tree_map(lambda spec: tensor_spec(spec, tf.float32), environment_spec.rewards),
            discount=tensor_spec(environment_spec.discounts, tf.float32),
            next_observation=observation,
            extras=jax.tree_util.tree_map(tensor_spec, extras_spec),
        )
