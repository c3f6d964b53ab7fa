"""IPPO/MAPPO networks: per policy, one actor MLP and one critic MLP shared by the agents mapped to it.

The actor of agent i sees [its observation, one-hot(i's index among its policy's agents)]; the critic sees the
same (IPPO) or [the global state, that one-hot] (MAPPO). The global state is every agent's observation concatenated
in the environment's agent order (an absent agent's held final observation included: what the environment last
showed).
"""

import dataclasses
from typing import Dict, Mapping, Sequence, Tuple

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np
from dm_env import specs

from acmelike.networks import MLP, FeedForwardNetwork
from acmelike.specs import EnvironmentSpec
from acmelike.wrappers.pettingzoo_adapter import agent_ids
from agents.multiagent import agent_spec, policy_groups
from agents.ippo.config import SHARED_POLICY, IPPOConfig


class _SharedActorCritic(nn.Module):
    hidden_sizes: Sequence[int]
    num_actions: int
    agent_id_input: bool
    centralised_critic: bool

    @nn.compact
    def __call__(self, observations, global_state):
        """observations [M, n, D], global_state [M, G] -> logits [M, n, A], values [M, n]."""
        batch, num_agents = observations.shape[:2]
        ids = jnp.broadcast_to(jnp.eye(num_agents), (batch, num_agents, num_agents))
        actor_inputs = jnp.concatenate([observations, ids], -1) if self.agent_id_input else observations
        if self.centralised_critic:
            states = jnp.broadcast_to(global_state[:, None], (batch, num_agents, global_state.shape[-1]))
            critic_inputs = jnp.concatenate([states, ids], -1) if self.agent_id_input else states
        else:
            critic_inputs = actor_inputs
        hidden = nn.initializers.orthogonal(np.sqrt(2))

        def mlp(inputs, size, final_scale):
            flat = jnp.reshape(inputs, (batch * num_agents, inputs.shape[-1]))
            out = MLP(tuple(self.hidden_sizes) + (size,), activation=nn.tanh, kernel_init=hidden,
                      final_kernel_init=nn.initializers.orthogonal(final_scale))(flat)
            return jnp.reshape(out, (batch, num_agents, size))

        logits = mlp(actor_inputs, self.num_actions, 0.01)  # a near-uniform initial policy
        values = mlp(critic_inputs, 1, 1.0)[..., 0]
        return logits, values


@dataclasses.dataclass(frozen=True)
class SharedPolicy:
    """The agents sharing one policy's parameters, and its network.

    `network.apply(params, observations [M, n, D], global_state [M, G]) -> (logits [M, n, A], values [M, n])`,
    agents in `agent_ids` order (n = len(agent_ids)).
    """

    agent_ids: Tuple[str, ...]
    network: FeedForwardNetwork


@dataclasses.dataclass(frozen=True)
class MultiAgentPPONetworks:
    """Policies by name (parameters are `{policy name: params}`), and every agent id in environment order."""

    policies: Mapping[str, SharedPolicy]
    agent_ids: Tuple[str, ...]

    def init(self, key) -> Dict[str, object]:
        keys = jax.random.split(key, len(self.policies))
        return {name: policy.network.init(k) for (name, policy), k in zip(self.policies.items(), keys)}


def global_state(observations: Mapping, ids: Sequence[str]) -> jax.Array:
    """[..., G]: every agent's observation (flattened), concatenated in `ids` order; `observations`: {id:
    AgentObservation} with leading dims [...].

    The active flags are left out on purpose: at an episode's last timestep every agent is inactive, and a
    truncated episode bootstraps from the value of that state, which the critic never trains on (its steps are
    masked): with the flags in, that state would lie outside everything the critic learned from.
    """
    return jnp.concatenate(
        [jnp.reshape(observations[agent].observation, observations[agent].active.shape + (-1,)).astype(jnp.float32)
         for agent in ids], -1)


def stack_agents(nest: Mapping, ids: Sequence[str], axis: int) -> jax.Array:
    """{id: [*lead, ...]} -> [*lead, n, ...] with `axis` = len(lead), agents in `ids` order."""
    return jnp.stack([jnp.asarray(nest[agent]) for agent in ids], axis=axis)


def make_networks(environment_spec: EnvironmentSpec, config: IPPOConfig = IPPOConfig()) -> MultiAgentPPONetworks:
    """One `SharedPolicy` per policy of `config.policy_mapping`, sized by `config.hidden_sizes`.

    ValueError, naming the agents: the spec is not a multi-agent one; the mapping names an agent the environment
    lacks; agents sharing a policy have different observation or action specs (`agents.multiagent.policy_groups`);
    an action is not discrete or an observation not a float array.
    """
    name = "MAPPO" if config.centralised_critic else "IPPO"
    groups = policy_groups(name, environment_spec, config.policy_mapping, default=lambda agent: SHARED_POLICY)
    ids = agent_ids(environment_spec)
    global_size = sum(int(np.prod(environment_spec.observations[a].observation.shape)) for a in ids)
    policies = {policy: _shared_policy(name, members, environment_spec, config, global_size)
                for policy, members in groups.items()}
    return MultiAgentPPONetworks(policies=policies, agent_ids=ids)


def _shared_policy(name, members, spec, config, global_size) -> SharedPolicy:
    first = agent_spec(spec, members[0])
    if not isinstance(first.actions, specs.DiscreteArray):
        raise ValueError(f"{name} needs discrete actions, but agent {members[0]!r}'s action spec is {first.actions!r}.")
    if not np.issubdtype(first.observations.dtype, np.floating):
        raise ValueError(
            f"{name} needs float array observations, but agent {members[0]!r}'s spec is {first.observations!r}.")
    module = _SharedActorCritic(
        hidden_sizes=tuple(config.hidden_sizes), num_actions=int(first.actions.num_values),
        agent_id_input=config.agent_id_input, centralised_critic=config.centralised_critic,
    )
    dummy = (jnp.zeros((1, len(members), int(np.prod(first.observations.shape))), jnp.float32),
             jnp.zeros((1, global_size), jnp.float32))
    return SharedPolicy(agent_ids=members,
                        network=FeedForwardNetwork(init=lambda key: module.init(key, *dummy), apply=module.apply))
