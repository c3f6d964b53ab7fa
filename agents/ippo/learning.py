"""The IPPO/MAPPO learning step: PPO's loss (`acmelike.losses.ppo_loss`) and GAE per agent, summed over policies.

Each agent's steps are a sequence of their own: its step t counts (mask 1) exactly when its observation at t is
active (it acted there), GAE is cut after its last active step, and that step bootstraps from its final
observation with its own discount (0 if it terminated, 1 if truncated). Steps of absent agents, and the
padding step after each episode's last observation (where every agent is inactive), count for nothing.
"""

from typing import Dict

import jax
import jax.numpy as jnp

from acmelike.losses import generalized_advantage_estimation, ppo_loss
from acmelike.types import ReplaySample
from agents.ippo.config import IPPOConfig
from agents.ippo.networks import MultiAgentPPONetworks, global_state, stack_agents
from agents.ppo.learning import TrainingState, make_optimizer, minibatch_epochs

# GAE over [B, T, n]: one independent sequence per (batch row, agent).
_per_agent_gae = jax.vmap(
    jax.vmap(generalized_advantage_estimation, in_axes=(1, 1, 1, None, 1), out_axes=1),
    in_axes=(0, 0, 0, None, 0),
)


def init_training_state(networks: MultiAgentPPONetworks, config: IPPOConfig, key: jax.Array) -> TrainingState:
    init_key, key = jax.random.split(key)
    params = networks.init(init_key)
    return TrainingState(params=params, opt_state=make_optimizer(config).init(params), key=key,
                         steps=jnp.zeros((), jnp.int32))


def policy_batches(networks: MultiAgentPPONetworks, config: IPPOConfig, params, steps) -> Dict:
    """The loss's inputs from a batch of sequences `steps` (a `Step` of per-agent dicts, [B, T + 1]).

    Returns {"global_state": [B * T, G], "policies": {name: {observation [B*T, n, D], action, log_prob,
    advantage, returns, mask: [B*T, n]}}}: time steps as items, each with every agent of every policy.
    Advantages are normalised per policy over its unmasked steps when `config.normalize_advantages`.
    """
    batch, rows = steps.start_of_episode.shape[:2]
    length = rows - 1
    state = global_state(steps.observation, networks.agent_ids)  # [B, T + 1, G]
    data = {"global_state": jnp.reshape(state[:, :length], (batch * length, -1)), "policies": {}}
    for name, policy in networks.policies.items():
        ids = policy.agent_ids

        def stacked(nest, ids=ids):  # {id: [B, T + 1, ...]} -> [B, T + 1, n, ...]
            return stack_agents(nest, ids, axis=2)

        observations = stacked({a: jnp.reshape(steps.observation[a].observation, (batch, rows, -1)) for a in ids})
        active = stacked({a: steps.observation[a].active for a in ids}).astype(jnp.float32)
        _, values = policy.network.apply(
            params[name], jnp.reshape(observations, (batch * rows,) + observations.shape[2:]),
            jnp.reshape(state, (batch * rows, -1)),
        )
        values = jnp.reshape(values, (batch, rows, len(ids)))
        mask = active[:, :length]
        # A_t may take in A_{t+1} only if the agent acts at t + 1; the last row's A is 0 (bootstrap) anyway.
        continues = jnp.concatenate([active[:, 1:length], jnp.ones((batch, 1, len(ids)))], axis=1)
        discounts = config.discount * stacked(steps.discount)[:, :length].astype(jnp.float32)
        rewards = stacked(steps.reward)[:, :length].astype(jnp.float32)
        advantages = _per_agent_gae(rewards, discounts, values, config.gae_lambda, continues)
        returns = advantages + values[:, :length]
        if config.normalize_advantages:
            count = jnp.maximum(mask.sum(), 1.0)
            mean = jnp.sum(advantages * mask) / count
            std = jnp.sqrt(jnp.sum(jnp.square(advantages - mean) * mask) / count)
            advantages = (advantages - mean) / (std + 1e-8)

        def items(x):  # [B, T (+ 1), n, ...] -> [B * T, n, ...]
            x = x[:, :length]
            return jnp.reshape(x, (batch * length,) + x.shape[2:])

        data["policies"][name] = dict(
            observation=items(observations),
            action=items(stacked(steps.action)).astype(jnp.int32),
            log_prob=items(stacked(steps.extras["log_prob"])).astype(jnp.float32),
            advantage=items(advantages),
            returns=items(returns),
            mask=items(mask),
        )
    return data


def loss(networks: MultiAgentPPONetworks, config: IPPOConfig, params, items: Dict):
    """The sum over policies of PPO's loss on `items` (from `policy_batches`, any number M of items), each
    policy's agents' steps pooled: (loss, {policy name: PPOLossOutput})."""
    total, outputs = 0.0, {}
    for name, policy in networks.policies.items():
        data = items["policies"][name]
        logits, values = policy.network.apply(params[name], data["observation"], items["global_state"])

        def flat(x):  # [M, n, ...] -> [M * n, ...]
            return jnp.reshape(x, (-1,) + x.shape[2:])

        outputs[name] = ppo_loss(
            flat(logits), flat(values), flat(data["action"]), flat(data["log_prob"]), flat(data["advantage"]),
            flat(data["returns"]), flat(data["mask"]),
            clip_epsilon=config.clip_epsilon, value_cost=config.value_cost, entropy_cost=config.entropy_cost,
        )
        total = total + outputs[name].loss
    return total, outputs


def make_update_step(networks: MultiAgentPPONetworks, config: IPPOConfig):
    """Returns `update_step(state, sample) -> (state, metrics, extras)`: `num_epochs` passes of
    `num_minibatches` shuffled minibatches of time steps over `sample.data` ([B, T + 1], T = unroll_length).

    Metrics: "loss" (summed over policies), the other PPO outputs averaged over policies, and the fraction of
    agent steps that count ("mask_fraction")."""
    optimizer = make_optimizer(config)

    def update_step(state: TrainingState, sample: ReplaySample):
        data = policy_batches(networks, config, state.params, sample.data)
        key, epoch_key = jax.random.split(state.key)
        params, opt_state, outputs = minibatch_epochs(
            optimizer, lambda params, minibatch: loss(networks, config, params, minibatch), state.params,
            state.opt_state, data, epoch_key, num_epochs=config.num_epochs, num_minibatches=config.num_minibatches,
        )
        per_policy = list(outputs.values())
        metrics = {field: jnp.mean(jnp.stack([jnp.mean(getattr(o, field)) for o in per_policy]))
                   for field in per_policy[0]._fields}
        metrics["loss"] = sum(jnp.mean(o.loss) for o in per_policy)
        masks = [p["mask"] for p in data["policies"].values()]
        metrics["mask_fraction"] = sum(m.sum() for m in masks) / sum(m.size for m in masks)
        new_state = TrainingState(params=params, opt_state=opt_state, key=key, steps=state.steps + 1)
        return new_state, metrics, {}

    return update_step
