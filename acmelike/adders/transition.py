"""NStepTransitionAdder: one n-step `Transition` item per environment step."""

import collections
from typing import Sequence, Union

import jax
import numpy as np

from acmelike.adders._writer import PriorityFns, ReverbAdder, as_float32, tensor_spec
from acmelike.types import NestedSpec, Transition


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

    Storage: row t of the writer holds o_t, a_t, extras_t and, in two extra columns, the reward and discount of
    the window that the timestep after a_t completes (start t + 1 - n); items only reference cells, so each
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
        self._clear()

    def _clear(self):
        self._t = 0  # index of the row holding the latest observation
        self._first_open = 0  # first start step whose transition is not written yet
        self._rewards = collections.deque(maxlen=self._n)  # r_t and d_t of the last n steps, as float64
        self._discounts = collections.deque(maxlen=self._n)

    def _begin(self, timestep):
        self._writer.append({"observation": timestep.observation}, partial_step=True)

    def _window(self, start: int):
        """Reward and total discount of the window from `start` to the latest observation (at most n steps)."""
        offset = self._t - start  # window length m
        rewards = list(self._rewards)[-offset:]
        discounts = list(self._discounts)[-offset:]
        weights = [np.float64(1.0)]
        for discount in discounts:
            weights.append(weights[-1] * self._gamma * discount)
        total_reward = jax.tree_util.tree_map(
            lambda *rs: sum(weight * r for weight, r in zip(weights, rs)), *rewards  # rewards may be nested
        )
        return {"reward": as_float32(total_reward), "discount": as_float32(weights[-1])}

    def _write_transition(self, start: int, n_step_row: int):
        """An item for `start`, its n-step reward/discount in row `n_step_row` (counted from the end)."""
        history = self._writer.history
        at_start = lambda column: column[start]  # noqa: E731
        trajectory = Transition(
            observation=jax.tree_util.tree_map(at_start, history["observation"]),
            action=jax.tree_util.tree_map(at_start, history["action"]),
            reward=jax.tree_util.tree_map(lambda column: column[n_step_row], history["n_step"]["reward"]),
            discount=history["n_step"]["discount"][n_step_row],
            next_observation=jax.tree_util.tree_map(lambda column: column[self._t], history["observation"]),
            extras=jax.tree_util.tree_map(at_start, history.get("extras", ())),
        )
        self._create_items(trajectory)
        self._first_open = start + 1

    def _step(self, action, next_timestep, extras):
        self._rewards.append(jax.tree_util.tree_map(lambda r: np.asarray(r, np.float64), next_timestep.reward))
        self._discounts.append(np.asarray(next_timestep.discount, np.float64))
        self._t += 1
        start = self._t - self._n  # the start whose full n-step window this step completes
        row = {"action": action, "extras": extras}
        if start >= 0:
            row["n_step"] = self._window(start)
        self._writer.append(row)  # closes row t - 1
        self._writer.append({"observation": next_timestep.observation}, partial_step=True)
        if start >= 0:
            self._write_transition(start, n_step_row=-2)  # row t - 1, before the newly opened row
        if next_timestep.last():
            # Windows cut short by the episode end; each gets its reward/discount in a row of its own (the
            # first closes the final observation's row). None of them reference more than n + 1 rows back.
            for start in range(self._first_open, self._t):
                self._writer.append({"n_step": self._window(start)})
                self._write_transition(start, n_step_row=-1)
            else:
                # No window was cut short (n == 1), so nothing closed the final observation's partial row;
                # reverb 0.7.2's end_episode() leaves it open for the next episode's first append.
                self._writer.append({})
            self._writer.end_episode(clear_buffers=True)
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
