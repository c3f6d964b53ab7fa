"""EpisodeReturns: running episode returns of a batch of environments, and the returns of episodes that end.

A reward may be a nest (a multi-agent environment's per-agent dict, `acmelike.anakin.jaxmarl`): the return is
then the team's, the sum over the reward's leaves, as the PettingZoo runners report it."""

import functools
from typing import NamedTuple, Tuple

import jax
import jax.numpy as jnp


class EpisodeReturns(NamedTuple):
    """Per environment ([B]): the return of the episode in progress."""

    current: jax.Array

    @classmethod
    def zeros(cls, num_envs: int) -> "EpisodeReturns":
        return cls(current=jnp.zeros((num_envs,), jnp.float32))

    def add(self, reward, last: jax.Array, counts: jax.Array) -> Tuple["EpisodeReturns", jax.Array]:
        """Adds `reward` (the sum of its leaves, if a nest) where `counts` ([B] bool: a real environment step);
        returns the new state and, per environment, the finished episode's return where this step was its `last`,
        NaN elsewhere."""
        reward = functools.reduce(jnp.add, jax.tree_util.tree_leaves(reward))
        total = self.current + jnp.where(counts, reward, 0.0)
        ended = jnp.logical_and(counts, last)
        return EpisodeReturns(jnp.where(ended, 0.0, total)), jnp.where(ended, total, jnp.nan)
