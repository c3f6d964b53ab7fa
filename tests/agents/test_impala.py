"""IMPALA's V-trace loss against the paper's definition, and its reduction to n-step returns on-policy."""

import jax
import jax.numpy as jnp
import numpy as np
import rlax

from acmelike.losses import impala_loss
from acmelike.networks.recurrent import LSTMState


def _reference_vtrace(values, rewards, discounts, rhos, lambda_=1.0, rho_bar=1.0, c_bar=1.0):
    """v_s from Espeholt et al. (2018), eq. 1, summed term by term."""
    steps = len(rewards)
    clipped = np.minimum(rho_bar, rhos)
    cs = lambda_ * np.minimum(c_bar, rhos)
    targets = np.zeros(steps)
    for s in range(steps):
        total, weight = values[s], 1.0
        for t in range(s, steps):
            delta = clipped[t] * (rewards[t] + discounts[t] * values[t + 1] - values[t])
            total += weight * delta
            weight *= discounts[t] * cs[t]
        targets[s] = total
    return targets


def _batch(seed=0, steps=6, actions=3):
    rng = np.random.default_rng(seed)
    return dict(
        logits=rng.normal(size=(steps, actions)).astype(np.float32),
        values=rng.normal(size=(steps + 1,)).astype(np.float32),
        actions=rng.integers(0, actions, size=(steps,)).astype(np.int32),
        rewards=rng.normal(size=(steps,)).astype(np.float32),
        discounts=(0.9 * (rng.random(steps) > 0.2)).astype(np.float32),
        behaviour_logits=rng.normal(size=(steps, actions)).astype(np.float32),
        mask=np.ones(steps, np.float32),
    )


def _log_softmax(x):
    return x - np.log(np.sum(np.exp(x), axis=-1, keepdims=True))


def test_vtrace_targets_and_pg_advantage_match_the_paper_and_rlax():
    batch = _batch()
    out = impala_loss(**batch, baseline_cost=0.5, entropy_cost=0.0)
    index = np.arange(len(batch["actions"]))
    log_pi = _log_softmax(batch["logits"])[index, batch["actions"]]
    log_mu = _log_softmax(batch["behaviour_logits"])[index, batch["actions"]]
    rhos = np.exp(log_pi - log_mu)
    assert rhos.min() < 1 < rhos.max()  # clipping matters in this batch
    targets = _reference_vtrace(batch["values"], batch["rewards"], batch["discounts"], rhos)
    np.testing.assert_allclose(out.vtrace_targets, targets, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(
        out.vtrace_targets, rlax.vtrace(batch["values"][:-1], batch["values"][1:], batch["rewards"],
                                        batch["discounts"], rhos) + batch["values"][:-1], rtol=1e-5, atol=1e-5
    )
    # Policy gradient: -min(1, rho_s) (r_s + gamma_s v_{s+1} - V(x_s)) log pi(a_s|x_s), v_T = V(x_T).
    next_targets = np.append(targets[1:], batch["values"][-1])
    advantages = np.minimum(1.0, rhos) * (batch["rewards"] + batch["discounts"] * next_targets - batch["values"][:-1])
    np.testing.assert_allclose(out.pg_loss, -np.mean(advantages * log_pi), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(out.baseline_loss, 0.5 * np.mean((targets - batch["values"][:-1]) ** 2), rtol=1e-5)
    # The lag diagnostic: log(pi/mu) of each taken action (the learner logs minus its mean as KL(mu || pi)).
    np.testing.assert_allclose(out.log_importance_ratios, log_pi - log_mu, rtol=1e-5, atol=1e-6)


def test_on_policy_vtrace_is_the_n_step_return():
    batch = _batch(seed=1)
    batch["behaviour_logits"] = batch["logits"]  # behaviour = target: every ratio is 1
    out = impala_loss(**batch)
    rewards, discounts, values = batch["rewards"], batch["discounts"], batch["values"]
    returns, bootstrap = np.zeros(len(rewards)), values[-1]
    for s in reversed(range(len(rewards))):
        bootstrap = rewards[s] + discounts[s] * bootstrap
        returns[s] = bootstrap
    np.testing.assert_allclose(out.vtrace_targets, returns, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(out.log_importance_ratios, 0.0, atol=1e-6)  # no lag: KL(mu || pi) = 0


def test_padding_steps_carry_no_correction_and_no_loss():
    batch = _batch(seed=2)
    batch["discounts"][:] = 0.9  # a truncated episode: its last real step bootstraps from the padding step
    batch["mask"][3] = 0.0  # step 3 is the row after step 2's episode ended; step 4 starts a new episode
    out = impala_loss(**batch, entropy_cost=0.0)
    assert out.log_importance_ratios[3] == 0.0  # padding takes no part in the lag diagnostic either
    # The padding step's target is its own value: step 2 bootstraps from V(x_3) and nothing from later steps.
    np.testing.assert_allclose(out.vtrace_targets[3], batch["values"][3], atol=1e-6)
    changed = dict(batch, rewards=batch["rewards"].copy())
    changed["rewards"][3:] += 10.0  # later rewards (the padding step's and the next episode's)
    later = impala_loss(**changed, entropy_cost=0.0)
    np.testing.assert_allclose(later.vtrace_targets[:3], out.vtrace_targets[:3], atol=1e-6)

    def loss_of_padding_logits(logits):
        return impala_loss(**dict(batch, logits=logits)).loss

    grads = jax.grad(loss_of_padding_logits)(jnp.asarray(batch["logits"]))
    np.testing.assert_allclose(grads[3], 0.0, atol=1e-7)
    assert np.abs(grads[2]).max() > 1e-4


def test_learning_rate_anneals_to_zero_over_the_decay_steps():
    from agents.impala import IMPALAConfig
    from agents.impala.learning import make_optimizer

    params = {"w": jnp.ones(3)}
    grads = {"w": jnp.ones(3)}
    optimizer = make_optimizer(IMPALAConfig(learning_rate=1e-2, learning_rate_decay_steps=2))
    state = optimizer.init(params)
    sizes = []
    for _ in range(3):
        updates, state = optimizer.update(grads, state, params)
        sizes.append(float(jnp.abs(updates["w"]).max()))
    assert sizes[0] > sizes[1] > 0.0 and sizes[2] == 0.0, sizes  # rates 1e-2, 5e-3, then 0 from step 2 on
    constant = make_optimizer(IMPALAConfig(learning_rate=1e-2, learning_rate_decay_steps=0))
    state = constant.init(params)
    for _ in range(3):
        updates, state = constant.update(grads, state, params)
    assert float(jnp.abs(updates["w"]).max()) > 5e-3


def test_zero_momentum_makes_each_update_depend_on_its_own_batch_only():
    """adam_momentum_decay=0 (the setting for distributed runs): an update after a reversed gradient points the
    new way at once; with Adam's default momentum it still points the old way."""
    from agents.impala import IMPALAConfig
    from agents.impala.learning import make_optimizer

    params = {"w": jnp.ones(1)}

    def second_update(**adam):
        optimizer = make_optimizer(IMPALAConfig(learning_rate=1e-2, learning_rate_decay_steps=0, **adam))
        state = optimizer.init(params)
        for _ in range(5):
            _, state = optimizer.update({"w": jnp.ones(1)}, state, params)
        updates, _ = optimizer.update({"w": -jnp.ones(1)}, state, params)
        return float(updates["w"][0])

    assert second_update(adam_momentum_decay=0.0, adam_variance_decay=0.99) > 0  # follows the new gradient
    assert second_update() < 0  # momentum 0.9 still carries the old direction


def test_reward_scale_is_the_update_on_rewards_scaled_by_hand():
    """`reward_scale=s` on rewards r takes the step that the unscaled update takes on s * r (and not the one it
    takes on r): the scale reaches V-trace and nothing else."""
    from dm_env import specs

    from acmelike.types import ReplaySample, SampleInfo, Step
    from agents.impala import IMPALAConfig, make_networks
    from agents.impala.learning import init_training_state, make_update_step
    from tests.fakes import discrete_spec

    batch, steps, hidden = 2, 5, 8
    observations = np.random.default_rng(0).normal(size=(batch, steps + 1, 4)).astype(np.float32)
    starts = np.zeros((batch, steps + 1), bool)
    starts[:, 0] = starts[1, 3] = True  # the second sequence's first episode ends inside it

    def update(config, reward):
        data = Step(
            observation=observations, action=np.zeros((batch, steps + 1), np.int32),
            reward=np.full((batch, steps + 1), reward, np.float32), discount=np.ones((batch, steps + 1), np.float32),
            start_of_episode=starts,
            extras={"core_state": LSTMState(cell=np.zeros((batch, steps + 1, hidden), np.float32),
                                            hidden=np.zeros((batch, steps + 1, hidden), np.float32)),
                    "logits": np.zeros((batch, steps + 1, 3), np.float32)},
        )
        sample = ReplaySample(info=SampleInfo(np.arange(batch, dtype=np.uint64), np.ones(batch),
                                              np.full(batch, batch)), data=data)
        networks = make_networks(discrete_spec(specs.Array((4,), np.float32, "observation")), config)
        state = init_training_state(networks, config, jax.random.PRNGKey(0))
        new_state, metrics, _ = jax.jit(make_update_step(networks, config))(state, sample)
        return jax.tree_util.tree_leaves(new_state.params), metrics

    plain = IMPALAConfig(hidden_sizes=(hidden,), lstm_size=hidden)
    scaled = IMPALAConfig(hidden_sizes=(hidden,), lstm_size=hidden, reward_scale=0.1)
    by_hand_params, by_hand = update(plain, -0.1)
    by_config_params, by_config = update(scaled, -1.0)
    _, unscaled = update(plain, -1.0)
    np.testing.assert_allclose(float(by_config["baseline_loss"]), float(by_hand["baseline_loss"]), rtol=1e-5)
    for a, b in zip(by_config_params, by_hand_params):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-7)
    assert float(unscaled["baseline_loss"]) > 10 * float(by_config["baseline_loss"])
