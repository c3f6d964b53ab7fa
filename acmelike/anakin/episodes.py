"""EpisodeReturns: running episode returns of a batch of environments, and the returns of episodes that end.

A reward may be a nest (a multi-agent environment's per-agent dict, `acmelike.anakin.jaxmarl`): the return is
then the team's, the sum over the reward's leaves, as the PettingZoo runners report it, and each agent's is kept
beside it (`EpisodeEnds.agents`), as `EnvironmentLoop` keeps `episode_return/<agent id>`."""

import functools
from typing import Any, Dict, Mapping, NamedTuple, Tuple

import jax
import jax.numpy as jnp


def _team(reward) -> jax.Array:
    return functools.reduce(jnp.add, jax.tree_util.tree_leaves(reward))


class EpisodeEnds(NamedTuple):
    """Per environment ([B]): the return of an episode that ended at this step, NaN elsewhere; the team's, and
    each agent's by agent id (empty for a reward that is not a dict of agents')."""

    team: jax.Array
    agents: Dict[str, jax.Array]


class EpisodeReturns(NamedTuple):
    """Per environment ([B]): the return of the episode in progress, the team's and each agent's."""

    current: jax.Array
    agents: Dict[str, jax.Array]

    @classmethod
    def zeros(cls, num_envs: int, reward_spec: Any = None) -> "EpisodeReturns":
        """No return yet. `reward_spec`: the environment's; a dict of agents' rewards (a multi-agent environment's)
        keeps each agent's return too."""
        agents = reward_spec if isinstance(reward_spec, Mapping) else {}
        zeros = jnp.zeros((num_envs,), jnp.float32)
        return cls(current=zeros, agents={agent: zeros for agent in agents})

    def add(self, reward, last: jax.Array, counts: jax.Array) -> Tuple["EpisodeReturns", EpisodeEnds]:
        """Adds `reward` (the sum of its leaves, if a nest) where `counts` ([B] bool: a real environment step);
        returns the new state and, per environment, the finished episode's returns where this step was its
        `last`, NaN elsewhere."""
        ended = jnp.logical_and(counts, last)

        def step(current, value):
            total = current + jnp.where(counts, value, 0.0)
            return jnp.where(ended, 0.0, total), jnp.where(ended, total, jnp.nan)

        team, team_ended = step(self.current, _team(reward))
        agents = {agent: step(current, _team(reward[agent])) for agent, current in self.agents.items()}
        return (EpisodeReturns(team, {agent: new for agent, (new, _) in agents.items()}),
                EpisodeEnds(team_ended, {agent: done for agent, (_, done) in agents.items()}))
