"""Maximum a posteriori policy optimisation (Abdolmaleki et al., 2018; decoupled KL constraints from Abdolmaleki
et al., 2018b, "Relative Entropy Regularized Policy Iteration") for diagonal Gaussian policies.

One MPO policy step from N actions sampled per state from the target policy pi_old and their Q values:

- E-step: the non-parametric policy q(a|s) ∝ pi_old(a|s) exp(Q(s, a) / eta) is, on the samples, a softmax of
  Q / eta over the N actions (`e_step_weights`). The temperature eta is the dual variable of the constraint
  KL(q || pi_old) <= epsilon and is learned by minimising the convex dual `temperature_dual_loss`.
- M-step: the policy maximises the q-weighted log likelihood of the samples (a weighted maximum likelihood fit,
  `weighted_log_likelihood_loss`) under the constraints KL(pi_old || pi) <= epsilon_mean on the mean and
  <= epsilon_stddev on the standard deviation, decoupled: the mean is fitted with the stddev held at pi_old's, and
  the stddev with the mean held at pi_old's. The constraints become penalties alpha * KL whose multipliers alpha
  are learned by `kl_constraint_dual_loss` (raised while a constraint is violated, lowered while it is slack).

Dual variables are stored as unconstrained parameters and mapped through a softplus (`dual_value`), as in Acme;
`project_dual_params` clips the parameters from below after each optimiser step so a multiplier never sticks at a
value whose gradient vanishes.

Shapes: N sampled actions, B states, A action dimensions.
"""

from typing import NamedTuple, Tuple

import chex
import jax
import jax.numpy as jnp

_DUAL_EPSILON = 1e-8  # added to every dual variable after the softplus: strictly positive
MIN_LOG_DUAL = -18.0  # lower clip of the dual parameters (`project_dual_params`)


class MPODualParams(NamedTuple):
    """The learned dual variables, before the softplus (see `dual_value`).

    log_temperature: [] the E-step temperature eta.
    log_alpha_mean: [A] (one per action dimension) or [1], the multiplier of the mean's KL constraint.
    log_alpha_stddev: [A] or [1], the multiplier of the standard deviation's KL constraint.
    """

    log_temperature: jax.Array
    log_alpha_mean: jax.Array
    log_alpha_stddev: jax.Array


class MPOLossOutput(NamedTuple):
    """`mpo_loss`'s total and its parts (scalars unless noted), for optimisation and logging."""

    loss: jax.Array  # policy_loss + kl_penalty + dual_loss: minimise in the policy and the dual parameters
    policy_loss: jax.Array  # weighted negative log likelihood, mean part plus stddev part
    kl_penalty: jax.Array  # alpha_mean * KL_mean + alpha_stddev * KL_stddev (alphas stopped)
    dual_loss: jax.Array  # temperature_loss + alpha_loss
    temperature_loss: jax.Array
    alpha_loss: jax.Array
    kl_nonparametric: jax.Array  # mean over states of KL(q || pi_old): the E-step constraint, held near epsilon
    kl_mean: jax.Array  # [A] or [1]: mean over states of KL(pi_old || pi with pi_old's stddev)
    kl_stddev: jax.Array  # [A] or [1]: mean over states of KL(pi_old || pi with pi_old's mean)
    temperature: jax.Array
    alpha_mean: jax.Array  # [A] or [1]
    alpha_stddev: jax.Array  # [A] or [1]


def init_dual_params(
    action_size: int,
    *,
    init_log_temperature: float,
    init_log_alpha_mean: float,
    init_log_alpha_stddev: float,
    per_dimension: bool = True,
) -> MPODualParams:
    """The dual parameters: a scalar temperature and, per action dimension (or one for all), the two multipliers.

    Values are in the unconstrained space: `dual_value(init_log_temperature)` is the initial temperature.
    """
    size = action_size if per_dimension else 1
    return MPODualParams(
        log_temperature=jnp.asarray(init_log_temperature, jnp.float32),
        log_alpha_mean=jnp.full((size,), init_log_alpha_mean, jnp.float32),
        log_alpha_stddev=jnp.full((size,), init_log_alpha_stddev, jnp.float32),
    )


def dual_value(log_parameter: jax.Array) -> jax.Array:
    """softplus(parameter) + 1e-8: a dual variable (temperature or multiplier) from its parameter, > 0.

    The softplus (rather than exp) keeps large values linear in the parameter, so a multiplier that must grow by
    a lot is not slowed down by an ever smaller step in its logarithm, nor blown up by a large one.
    """
    return jax.nn.softplus(log_parameter) + _DUAL_EPSILON


def project_dual_params(params: MPODualParams, minimum: float = MIN_LOG_DUAL) -> MPODualParams:
    """Clips every dual parameter to >= `minimum` (a projection applied after each optimiser step)."""
    return jax.tree_util.tree_map(lambda p: jnp.maximum(p, minimum), params)


def e_step_weights(q_values: jax.Array, temperature: jax.Array) -> jax.Array:
    """The E-step's non-parametric policy on the samples: w[i, b] = softmax_i(Q[i, b] / eta).

    The actions were sampled from pi_old, so q(a_i|s_b) ∝ pi_old(a_i|s_b) exp(Q / eta) is represented by these
    self-normalised weights over the N samples of each state. Q values and the temperature are stopped from
    gradients (the weights are targets of the M-step).

    Args:
      q_values: [N, B] Q values of N actions sampled from the target policy in each of B states.
      temperature: [] eta > 0.

    Returns:
      [N, B] weights, each column summing to one.
    """
    chex.assert_rank([q_values, temperature], [2, 0])
    tempered = jax.lax.stop_gradient(q_values) / jax.lax.stop_gradient(temperature)
    return jax.nn.softmax(tempered, axis=0)


def temperature_dual_loss(q_values: jax.Array, temperature: jax.Array, epsilon: float) -> jax.Array:
    """The convex dual of the E-step (Abdolmaleki et al., 2018, eq. 9), sampled:

        g(eta) = eta * epsilon + eta * mean_b log( (1/N) sum_i exp(Q[i, b] / eta) ).

    Its derivative is dg/deta = epsilon - mean_b KL(q_b || pi_old) (with q the weights of `e_step_weights`), so
    gradient descent raises eta (flatter weights, smaller KL) while the E-step's KL exceeds epsilon, and lowers it
    (greedier weights) while the KL is below. Q values are stopped from gradients; gradients reach `temperature`.

    Args:
      q_values: [N, B]. temperature: [] eta > 0, differentiable. epsilon: the KL bound (> 0).

    Returns:
      the scalar loss.
    """
    chex.assert_rank([q_values, temperature], [2, 0])
    num_actions = q_values.shape[0]
    tempered = jax.lax.stop_gradient(q_values) / temperature
    log_mean_exp = jax.scipy.special.logsumexp(tempered, axis=0) - jnp.log(float(num_actions))
    return temperature * (epsilon + jnp.mean(log_mean_exp))


def nonparametric_kl(weights: jax.Array) -> jax.Array:
    """KL(q || pi_old) per state from the E-step weights: sum_i w_i log(N w_i) (`[N, B]` -> `[B]`); diagnostics."""
    chex.assert_rank(weights, 2)
    num_actions = weights.shape[0]
    return jnp.sum(weights * jnp.log(num_actions * weights + 1e-8), axis=0)


def gaussian_log_prob(actions: jax.Array, mean: jax.Array, stddev: jax.Array) -> jax.Array:
    """log N(actions; mean, diag(stddev^2)) summed over dimensions: `[N, B, A]` with `[B, A]` -> `[N, B]`."""
    chex.assert_rank([actions, mean, stddev], [3, 2, 2])
    z = (actions - mean[None]) / stddev[None]
    per_dimension = -0.5 * jnp.square(z) - jnp.log(stddev)[None] - 0.5 * jnp.log(2.0 * jnp.pi)
    return jnp.sum(per_dimension, axis=-1)


def gaussian_kl(mean_p: jax.Array, stddev_p: jax.Array, mean_q: jax.Array, stddev_q: jax.Array) -> jax.Array:
    """KL(N(mean_p, stddev_p^2) || N(mean_q, stddev_q^2)) per dimension: `[B, A]` inputs -> `[B, A]`."""
    chex.assert_equal_shape([mean_p, stddev_p, mean_q, stddev_q])
    ratio = jnp.square(stddev_p / stddev_q)
    return 0.5 * (ratio + jnp.square((mean_q - mean_p) / stddev_q) - 1.0 - jnp.log(ratio))


def weighted_log_likelihood_loss(actions: jax.Array, weights: jax.Array, mean: jax.Array,
                                 stddev: jax.Array) -> jax.Array:
    """The M-step's objective as a loss: -mean_b sum_i w[i, b] log pi(a[i, b] | s_b) (a weighted MLE fit).

    Args:
      actions: [N, B, A] the sampled actions (stopped from gradients).
      weights: [N, B] E-step weights (stopped from gradients).
      mean, stddev: [B, A] the Gaussian pi being fitted; gradients flow into them.

    Returns:
      the scalar loss.
    """
    chex.assert_rank([actions, weights], [3, 2])
    log_prob = gaussian_log_prob(jax.lax.stop_gradient(actions), mean, stddev)
    return -jnp.mean(jnp.sum(jax.lax.stop_gradient(weights) * log_prob, axis=0))


def kl_constraint_dual_loss(kl: jax.Array, alpha: jax.Array, epsilon: float) -> Tuple[jax.Array, jax.Array]:
    """The Lagrangian terms of a constraint mean_b KL_b <= epsilon (per dimension when `kl` is `[B, A]`).

    Returns (penalty, dual loss):
      penalty = sum(stop_gradient(alpha) * mean_b KL): minimised by the policy (gradients reach it through `kl`);
      dual loss = sum(alpha * (epsilon - stop_gradient(mean_b KL))): minimised in alpha; its gradient
        epsilon - KL is negative while the constraint is violated (alpha rises, the penalty tightens) and positive
        while it is slack (alpha falls toward zero).

    Args:
      kl: [B, A] per-dimension KLs with alpha [A], or [B] whole-distribution KLs with alpha [1].
      alpha: the multipliers (> 0), differentiable.
      epsilon: the KL bound (> 0).
    """
    mean_kl = jnp.mean(kl, axis=0)
    if mean_kl.ndim == 0:
        mean_kl = mean_kl[None]
    chex.assert_equal_shape([mean_kl, alpha])
    penalty = jnp.sum(jax.lax.stop_gradient(alpha) * mean_kl)
    dual = jnp.sum(alpha * (epsilon - jax.lax.stop_gradient(mean_kl)))
    return penalty, dual


def mpo_loss(
    dual_params: MPODualParams,
    online_mean: jax.Array,
    online_stddev: jax.Array,
    target_mean: jax.Array,
    target_stddev: jax.Array,
    actions: jax.Array,
    q_values: jax.Array,
    *,
    epsilon: float,
    epsilon_mean: float,
    epsilon_stddev: float,
) -> MPOLossOutput:
    """MPO's policy loss with decoupled mean/stddev KL constraints (Abdolmaleki et al., 2018b, section 4).

    The online Gaussian pi = N(online_mean, online_stddev^2) is fitted to the E-step's weights twice: its mean
    with the stddev fixed at the target's, its stddev with the mean fixed at the target's. Each part is held near
    the target policy pi_old = N(target_mean, target_stddev^2) by its own KL penalty, KL(pi_old || part). The
    multipliers are per action dimension when `dual_params.log_alpha_mean` has A entries, over the whole
    distribution when it has one.

    Gradients: the total `loss` is differentiated in the online mean/stddev (policy parameters) and in
    `dual_params` (temperature and multipliers), each term giving only its own: the weights, the multipliers
    inside the penalty and the KLs inside the dual losses are stopped. `target_mean`, `target_stddev`, `actions`
    and `q_values` are stopped.

    Args:
      dual_params: the dual parameters (`init_dual_params`).
      online_mean, online_stddev: [B, A] the policy being learned.
      target_mean, target_stddev: [B, A] the target policy the actions were sampled from.
      actions: [N, B, A] actions sampled from the target policy (in the coordinates of the means).
      q_values: [N, B] their Q values.
      epsilon: the E-step's KL bound. epsilon_mean, epsilon_stddev: the M-step's bounds.
    """
    chex.assert_rank([online_mean, online_stddev, target_mean, target_stddev, actions, q_values],
                     [2, 2, 2, 2, 3, 2])
    chex.assert_equal_shape([online_mean, online_stddev, target_mean, target_stddev])
    target_mean, target_stddev = jax.lax.stop_gradient(target_mean), jax.lax.stop_gradient(target_stddev)
    temperature = dual_value(dual_params.log_temperature)
    alpha_mean = dual_value(dual_params.log_alpha_mean)
    alpha_stddev = dual_value(dual_params.log_alpha_stddev)

    weights = e_step_weights(q_values, temperature)
    temperature_loss = temperature_dual_loss(q_values, temperature, epsilon)

    # Decoupled M-step: the mean's fit sees the target's stddev, the stddev's fit the target's mean.
    policy_loss = (weighted_log_likelihood_loss(actions, weights, online_mean, target_stddev)
                   + weighted_log_likelihood_loss(actions, weights, target_mean, online_stddev))
    kl_mean = gaussian_kl(target_mean, target_stddev, online_mean, target_stddev)  # [B, A]
    kl_stddev = gaussian_kl(target_mean, target_stddev, target_mean, online_stddev)  # [B, A]
    if alpha_mean.shape[0] == 1 and online_mean.shape[-1] != 1:  # one constraint on the whole distribution
        kl_mean, kl_stddev = jnp.sum(kl_mean, axis=-1), jnp.sum(kl_stddev, axis=-1)
    penalty_mean, alpha_mean_loss = kl_constraint_dual_loss(kl_mean, alpha_mean, epsilon_mean)
    penalty_stddev, alpha_stddev_loss = kl_constraint_dual_loss(kl_stddev, alpha_stddev, epsilon_stddev)

    kl_penalty = penalty_mean + penalty_stddev
    alpha_loss = alpha_mean_loss + alpha_stddev_loss
    dual_loss = temperature_loss + alpha_loss

    def per_constraint(kl):
        mean = jnp.mean(kl, axis=0)
        return mean if mean.ndim else mean[None]

    return MPOLossOutput(
        loss=policy_loss + kl_penalty + dual_loss,
        policy_loss=policy_loss,
        kl_penalty=kl_penalty,
        dual_loss=dual_loss,
        temperature_loss=temperature_loss,
        alpha_loss=alpha_loss,
        kl_nonparametric=jnp.mean(nonparametric_kl(weights)),
        kl_mean=per_constraint(kl_mean),
        kl_stddev=per_constraint(kl_stddev),
        temperature=temperature,
        alpha_mean=alpha_mean,
        alpha_stddev=alpha_stddev,
    )
