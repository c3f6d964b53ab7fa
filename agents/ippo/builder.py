"""IPPOBuilder: parameter-shared PPO (IPPO, or MAPPO with a centralised critic) through the one builder interface.

The queue, dataset, CONTINUE sequence adder and learner are `OnPolicyBuilder`'s, unchanged: a sequence item is a
`Step` of per-agent dicts, so all agents' steps of `unroll_length + 1` environment steps travel together.
"""

from typing import NamedTuple

import jax
import jax.numpy as jnp

from acmelike.actors.actor_core import ActorCore
from acmelike.builders import ActorLearnerBuilder
from acmelike.learners import LearningParts
from acmelike.specs import EnvironmentSpec
from agents.ippo import learning
from agents.ippo.config import IPPOConfig
from agents.ippo.networks import MultiAgentPPONetworks, global_state, stack_agents
from agents.on_policy import OnPolicyBuilder


class _PolicyState(NamedTuple):
    key: jax.Array
    log_prob: dict  # {agent id: log pi(a|s) of the action just chosen}


def multiagent_categorical_core(networks: MultiAgentPPONetworks, greedy: bool = False) -> ActorCore:
    """Samples (or, if `greedy`, takes the mode of) each agent's categorical policy, one network call per policy.

    Observations and actions are dicts keyed by agent id; every agent gets an action, active or not (the
    environment drops those of absent agents). Extras: `{"log_prob": {agent id: log pi(a|s)}}`.
    """
    ids = networks.agent_ids

    def init(key):
        return _PolicyState(key=key, log_prob={agent: jnp.zeros((), jnp.float32) for agent in ids})

    def select_action(params, observation, state):
        key, sample_key = jax.random.split(state.key)
        state_input = global_state(observation, ids)[None]
        actions, log_probs = {}, {}
        for (name, policy), policy_key in zip(networks.policies.items(),
                                              jax.random.split(sample_key, len(networks.policies))):
            members = policy.agent_ids
            observations = stack_agents({a: jnp.ravel(observation[a].observation) for a in members}, members, 0)
            logits = policy.network.apply(params[name], observations[None], state_input)[0][0]  # [n, A]
            chosen = jnp.argmax(logits, -1) if greedy else jax.random.categorical(policy_key, logits)
            chosen_log_probs = jnp.take_along_axis(jax.nn.log_softmax(logits), chosen[:, None], -1)[:, 0]
            for index, agent in enumerate(members):
                actions[agent] = chosen[index].astype(jnp.int32)
                log_probs[agent] = chosen_log_probs[index]
        return actions, _PolicyState(key=key, log_prob=log_probs)

    return ActorCore(init=init, select_action=select_action, get_extras=lambda state: {"log_prob": state.log_prob})


class IPPOBuilder(OnPolicyBuilder, ActorLearnerBuilder[MultiAgentPPONetworks, ActorCore]):
    """Sequences of `unroll_length + 1` joint steps through a Reverb queue; each learner step consumes `batch_size`."""

    def __init__(self, config: IPPOConfig = IPPOConfig()):
        super().__init__(config)
        self.name = "MAPPO" if config.centralised_critic else "IPPO"

    def make_policy(self, *, networks: MultiAgentPPONetworks, environment_spec: EnvironmentSpec,
                    evaluation: bool = False):
        return multiagent_categorical_core(networks, greedy=evaluation)

    def learning_parts(self, *, networks: MultiAgentPPONetworks, environment_spec: EnvironmentSpec,
                       random_key) -> LearningParts:
        return LearningParts(
            state=learning.init_training_state(networks, self.config, random_key),
            update_step=learning.make_update_step(networks, self.config),
            loss_keys=("loss",),
            policy_params=lambda state: state.params,
        )
