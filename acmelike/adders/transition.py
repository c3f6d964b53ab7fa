"""NStepTransitionAdder: one n-step `Transition` item per environment step."""

import collections
from typing import NamedTuple, Sequence, Tuple, Union

import jax
import numpy as np

from acmelike.adders.reverb_base import PriorityFns, ReverbAdder
from acmelike.adders.validation import FieldSpec, InvalidStepError, RealFieldSpec
from acmelike.replay.tables import ArraySpec
from acmelike.types import NestedSpec, Transition


def _at(column_nest, index):
    """`column[index]` for every column of a (possibly nested) history entry."""
    if isinstance(column_nest, (dict, list, tuple)):
        return jax.tree_util.tree_map(lambda column: column[index], column_nest)
    return column_nest[index]


class RewardLayout(NamedTuple):
    """How per-step rewards and discounts combine into an item's n-step reward and total discount.

    `pairs[p]` = (reward leaf, discount leaf) of the item's reward leaf p; its shape is `reward_shapes[p]`, the
    two leaves' shapes broadcast together. The item's reward has `reward_treedef`, its discount the step
    discount's own structure and shapes.
    """

    pairs: Tuple[Tuple[int, int], ...]
    reward_shapes: Tuple[Tuple[int, ...], ...]
    reward_treedef: object
    discount_treedef: object
    discount_shapes: Tuple[Tuple[int, ...], ...]

    @property
    def scalar(self) -> bool:
        """One scalar reward and one scalar discount per step: the common case, summed as Python floats."""
        return self.pairs == ((0, 0),) and self.reward_shapes == ((),) and self.discount_shapes == ((),)


def reward_layout(reward_treedef, reward_shapes, discount_treedef, discount_shapes) -> RewardLayout:
    """The layout of rewards and discounts with these structures and leaf shapes, or a ValueError.

    A single discount array applies to every reward leaf; a nested discount needs either the reward's structure
    (one discount per reward leaf, e.g. one per objective) or a single reward array (which then yields one n-step
    reward per discount leaf). Shapes broadcast by NumPy's rules.
    """
    if jax.tree_util.treedef_is_leaf(discount_treedef):
        pairs, treedef = tuple((i, 0) for i in range(len(reward_shapes))), reward_treedef
    elif jax.tree_util.treedef_is_leaf(reward_treedef):
        pairs, treedef = tuple((0, j) for j in range(len(discount_shapes))), discount_treedef
    elif reward_treedef == discount_treedef:
        pairs, treedef = tuple((i, i) for i in range(len(reward_shapes))), reward_treedef
    else:
        raise ValueError(
            f"a nested discount must have the reward's structure (or the reward must be a single array), but the "
            f"reward has structure {reward_treedef} and the discount {discount_treedef}."
        )
    shapes = []
    for i, j in pairs:
        try:
            shapes.append(tuple(np.broadcast_shapes(tuple(reward_shapes[i]), tuple(discount_shapes[j]))))
        except ValueError:
            raise ValueError(
                f"a reward of shape {tuple(reward_shapes[i])} does not broadcast against its discount of shape "
                f"{tuple(discount_shapes[j])}."
            ) from None
    return RewardLayout(pairs, tuple(shapes), treedef, discount_treedef, tuple(map(tuple, discount_shapes)))


class NStepTransitionAdder(ReverbAdder):
    """Writes n-step transitions (Sutton & Barto, 2018, ch. 7) to Reverb, one per environment step.

    With r_t, d_t the reward and discount of the timestep returned after action a_t, gamma = `discount`, and
    m = min(n_step, steps left in the episode), the item for start step s is the Transition (no time axis):

        observation      = o_s                     action = a_s          extras = extras_s
        reward           = sum_{k<m} gamma^k (prod_{j<k} d_{s+j}) r_{s+k}     float32, r and d shapes broadcast
        discount         = gamma^m prod_{k<m} d_{s+k}                          float32, discount spec shape(s)
        next_observation = o_{s+m}

    `discount` is the *total* discount, so a TD target is `reward + discount * v(next_observation)`. Windows are
    shorter than n only at the episode end: a termination (d = 0) gives discount 0, a truncation (dm_env
    discount 1 on the last step) gives gamma^m * prod(d). Episodes shorter than n give shorter windows only.

    Rewards and discounts may be arrays and nests (`reward_layout`): a single discount array applies to every
    reward leaf; a nested discount has the reward's structure (one discount per reward leaf), or the reward is
    a single array (one n-step reward per discount leaf). Each n-step reward has the shape of its reward and
    discount broadcast together, in every window, the one-step windows at the episode end included; the total
    discount has the discount's structure and shapes. Sums are taken in float64 and stored as float32.

    Every step is checked before it is written (`ReverbAdder`) against the table's signature: a step's
    discount must have the item discount's spec and its reward the item reward's (a single number fills either).
    Without a signature, the first step's reward and discount fix the layout.

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
            half the throughput of 5, measured with benchmarks/replay_throughput.py). None never flushes
            mid-episode: items arrive as the writer's chunks fill (about 10% faster again, with no bound on the
            delay).
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
        self._layout = None  # RewardLayout, fixed by the table's signature or the first step
        self._clear()

    def _clear(self):
        self._t = 0  # index of the row holding the latest observation
        self._first_open = 0  # first start step whose transition is not written yet
        self._rewards = collections.deque(maxlen=self._n)  # leaves of r_t and d_t of the last n steps (float64)
        self._discounts = collections.deque(maxlen=self._n)

    def _row_specs(self, signature):
        """With a table signature, a step's discount has the item discount's spec, and its reward the item
        reward's (a single number fills it, e.g. a scalar reward against a discount of shape [2])."""
        if signature is None:
            return {}
        source = self._table_source()
        specs = {}
        for name in ("observation", "action", "extras", "reward", "discount"):
            kind = RealFieldSpec if name in ("reward", "discount") else FieldSpec
            specs[name] = kind.from_specs(name, self._signature_field(signature, name, source), source)
        reward, discount = specs["reward"], specs["discount"]
        try:
            self._layout = reward_layout(
                reward.structure,
                [s.shape for s in reward.leaves],
                discount.structure,
                [s.shape for s in discount.leaves],
            )
            if self._layout.reward_shapes != tuple(s.shape for s in reward.leaves):
                raise ValueError(f"its reward shapes cannot hold n-step rewards of shapes {self._layout.reward_shapes}")
            if any(s.dtype != np.float32 for s in reward.leaves + discount.leaves):
                raise ValueError("its rewards and discounts are not all float32")
        except ValueError as error:
            raise ValueError(
                f"{type(self).__name__}: {source} does not fit n-step transitions: {error}. Build the table with "
                f"NStepTransitionAdder.signature(environment_spec, extras_spec)."
            ) from None
        return specs

    def _accept_learned(self, field, spec):
        """Without a table signature: the first step's reward and discount fix the layout, if they combine."""
        if field != "discount":
            return
        reward = self._specs["reward"]
        try:
            self._layout = reward_layout(
                reward.structure, [s.shape for s in reward.leaves], spec.structure, [s.shape for s in spec.leaves]
            )
        except ValueError as error:
            raise InvalidStepError(f"{self._context}: {error}") from None

    def _begin(self, observation):
        self._writer.append({"observation": observation})

    def _window(self, start: int):
        """Reward and total discount of the window from `start` to the latest observation (at most n steps)."""
        offset = self._t - start  # window length m
        rewards = list(self._rewards)[-offset:]
        discounts = list(self._discounts)[-offset:]
        gamma, layout = self._gamma, self._layout
        if layout.scalar:
            total, weight = 0.0, 1.0
            for (r,), (d,) in zip(rewards, discounts):
                total += weight * r
                weight = weight * gamma * d  # the same association as below
            return {"n_step_reward": np.float32(total), "n_step_discount": np.float32(weight)}
        # Weights start as ones of each discount's shape, so that every total, a one-step window's included, has
        # the broadcast shape of its reward and discount (the item's signature).
        weights = [np.ones(shape) for shape in layout.discount_shapes]
        totals = [0.0] * len(layout.pairs)
        for reward_leaves, discount_leaves in zip(rewards, discounts):
            for p, (i, j) in enumerate(layout.pairs):
                totals[p] = totals[p] + weights[j] * reward_leaves[i]
            weights = [weight * gamma * d for weight, d in zip(weights, discount_leaves)]
        return {
            "n_step_reward": _float32_tree(layout.reward_treedef, totals),
            "n_step_discount": _float32_tree(layout.discount_treedef, weights),
        }

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
            discount=_at(history["n_step_discount"], -1),
            next_observation=_at(history["observation"], self._t),
            extras=_at(history.get("extras", ()), start + 1),
        )
        self._create_items(trajectory)
        self._first_open = start + 1

    def _step(self, action, observation, rewards, discounts, extras, last):
        self._rewards.append(rewards)
        self._discounts.append(discounts)
        self._t += 1
        start = self._t - self._n  # the start whose full n-step window this step completes
        # A flat row: reverb flattens every appended nest in Python, so each level of nesting costs per step.
        row = {"observation": observation, "action": action}
        if not (type(extras) is tuple and not extras):  # no column for empty extras (checked: () when none)
            row["extras"] = extras
        if start >= 0:
            row.update(self._window(start))
        writer = self._writer
        writer.append(row)  # row t, complete
        if start >= 0:
            self._write_transition(self._history_view(), start)
        if last:
            # Windows cut short by the episode end; each gets its reward/discount in a row of its own after the
            # final observation's row. None of them reference more than n + 1 rows back.
            for start in range(self._first_open, self._t):
                writer.append(self._window(start))
                self._write_transition(self._history_view(), start)
            self._end_episode(clear_buffers=True)
            self._clear()

    @staticmethod
    def signature(environment_spec, extras_spec: NestedSpec = ()) -> Transition:
        """The `ArraySpec` tree of one item: a Transition without time axis; reward and discount float32.

        The reward has the structure and broadcast shapes of `reward_layout` (e.g. a scalar reward with a
        discount of shape [2] gives rewards of shape [2]); the discount keeps the discount spec's structure.
        """
        rewards, reward_treedef = jax.tree_util.tree_flatten(environment_spec.rewards)
        discounts, discount_treedef = jax.tree_util.tree_flatten(environment_spec.discounts)
        try:
            layout = reward_layout(
                reward_treedef, [s.shape for s in rewards], discount_treedef, [s.shape for s in discounts]
            )
        except ValueError as error:
            raise ValueError(f"NStepTransitionAdder.signature: {error}") from None
        observation = jax.tree_util.tree_map(ArraySpec.of, environment_spec.observations)
        return Transition(
            observation=observation,
            action=jax.tree_util.tree_map(ArraySpec.of, environment_spec.actions),
            reward=jax.tree_util.tree_unflatten(
                layout.reward_treedef, [ArraySpec(shape, np.float32) for shape in layout.reward_shapes]
            ),
            discount=jax.tree_util.tree_unflatten(
                discount_treedef, [ArraySpec(shape, np.float32) for shape in layout.discount_shapes]
            ),
            next_observation=observation,
            extras=jax.tree_util.tree_map(ArraySpec.of, extras_spec),
        )


def _float32_tree(treedef, leaves):
    return jax.tree_util.tree_unflatten(treedef, [np.asarray(leaf, np.float32) for leaf in leaves])
