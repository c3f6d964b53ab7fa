"""A double Q-learning agent built from acmelike's pieces: the tutorial's code (docs/tutorial.md shows it in parts).

    .venv/bin/python docs/tutorial/my_agent.py     # trains on CartPole-v1 in one process, prints the JSON summary

`AGENT` describes it for the runners (`run_distributed.py` beside this file runs it as a distributed program).
tests/docs/test_tutorial.py runs `train` on a short budget and checks that the agent learned.
"""

# --8<-- [start:imports]
import dataclasses
import functools
import json
from typing import NamedTuple, Tuple

import jax
import jax.numpy as jnp
import optax

import launch
from acmelike.actors import epsilon_greedy_core
from acmelike.builders import ActorLearnerBuilder, AgentDefinition, policy_extras_spec
from acmelike.config_checks import check_field
from acmelike.learners import LearningParts
from acmelike.losses import double_q_td_loss
from acmelike.networks import MLP, FeedForwardNetwork
from acmelike.specs import EnvironmentSpec, flat_observation_size, num_discrete_actions
from acmelike.types import ReplaySample
from acmelike.wrappers import make_gymnasium_environment
from agents.config_parts import NStepTargets, Optimizer, Replay, SGDBatches, VariableUpdates
# --8<-- [end:imports]


# --8<-- [start:config]
@dataclasses.dataclass(frozen=True)
class QLearningConfig(Optimizer, NStepTargets, SGDBatches, Replay, VariableUpdates):
    """Hyperparameters of an n-step double Q-learning agent with uniform replay and a target network.

    The optimiser, target, batch, replay and parameter-fetch fields come from the parts in `agents.config_parts`,
    each with its `Attributes:` lines and its checks; this docstring documents the agent's own fields (and a part's
    field whose line it replaces).

    Attributes:
      samples_per_insert: transitions sampled per transition inserted (16, with batches of 64: an SGD step every 4
        environment steps); > 0.
      target_update_period: SGD steps between copies of the Q-network's parameters into the target network.
      hidden_sizes: the Q-network MLP's hidden layer sizes.
      epsilon_init: chance of a random action at an actor's first step, in [0, 1].
      epsilon_final: chance of a random action after `epsilon_decay_steps` steps, in [0, 1].
      epsilon_decay_steps: actor steps over which epsilon falls linearly.
    """

    # The parts' fields that take this agent's own defaults (each keeps its part's check, and its line unless the
    # docstring above gives one).
    max_gradient_norm: float = 10.0
    n_step: int = 3
    batch_size: int = 64
    min_replay_size: int = 500
    max_replay_size: int = 50_000
    samples_per_insert: float = 16.0
    replay_table_name: str = "transitions"
    variable_update_period: int = 10
    # The agent's own fields.
    target_update_period: int = 100
    hidden_sizes: Tuple[int, ...] = (128, 128)
    epsilon_init: float = 1.0
    epsilon_final: float = 0.01
    epsilon_decay_steps: int = 10_000

    def __post_init__(self):
        super().__post_init__()  # every part's checks
        check = functools.partial(check_field, self)  # errors name the field, its value and what is allowed
        check("target_update_period", self.target_update_period >= 1, ">= 1")
        check("epsilon_init", 0 <= self.epsilon_init <= 1, "in [0, 1]")
        check("epsilon_final", 0 <= self.epsilon_final <= 1, "in [0, 1]")
        check("epsilon_decay_steps", self.epsilon_decay_steps >= 1, ">= 1")
# --8<-- [end:config]


# --8<-- [start:networks]
def make_networks(spec: EnvironmentSpec, config: QLearningConfig) -> FeedForwardNetwork:
    """An MLP from flat observations to one Q-value per action: apply(params, [B, ...]) -> [B, A]."""
    num_actions = num_discrete_actions(spec, agent="Q-learning")  # ValueError naming the agent if it does not fit
    flat_observation_size(spec, agent="Q-learning")
    module = MLP(layer_sizes=tuple(config.hidden_sizes) + (num_actions,))
    dummy = jnp.zeros((1,) + tuple(spec.observations.shape), jnp.float32)
    return FeedForwardNetwork(init=lambda key: module.init(key, dummy), apply=module.apply)
# --8<-- [end:networks]


# --8<-- [start:learning]
class TrainingState(NamedTuple):
    params: optax.Params
    target_params: optax.Params
    opt_state: optax.OptState
    steps: jax.Array


def make_optimizer(config: QLearningConfig) -> optax.GradientTransformation:
    return optax.chain(optax.clip_by_global_norm(config.max_gradient_norm), optax.adam(config.learning_rate))


def init_training_state(network: FeedForwardNetwork, config: QLearningConfig, key: jax.Array) -> TrainingState:
    params = network.init(key)
    return TrainingState(params, params, make_optimizer(config).init(params), jnp.zeros((), jnp.int32))


def make_update_step(network: FeedForwardNetwork, config: QLearningConfig):
    """A pure `update_step(state, sample) -> (state, metrics, extras)`; the learner shell jits it."""
    optimizer = make_optimizer(config)

    def loss_fn(params, target_params, sample: ReplaySample):
        t = sample.data  # an acmelike.types.Transition batch: [B, ...] observations, [B] actions, rewards, discounts
        q_tm1 = network.apply(params, t.observation)  # [B, A]
        # Double Q-learning: the online network picks the bootstrap action, the target network values it. The
        # target is r + discount * q_t_value[argmax q_t_selector]: `t.discount` is already gamma^n times the
        # environment's discounts (0 after a termination), as the adder wrote it.
        loss, _ = double_q_td_loss(
            q_tm1=q_tm1,
            a_tm1=t.action.astype(jnp.int32),
            r_t=t.reward,
            discount_t=t.discount,
            q_t_value=network.apply(target_params, t.next_observation),
            q_t_selector=network.apply(params, t.next_observation),
            importance_weights=jnp.ones_like(t.reward),  # uniform replay
        )
        return loss, jnp.mean(q_tm1)

    def update_step(state: TrainingState, sample: ReplaySample):
        (loss, mean_q), grads = jax.value_and_grad(loss_fn, has_aux=True)(state.params, state.target_params, sample)
        updates, opt_state = optimizer.update(grads, state.opt_state)
        params = optax.apply_updates(state.params, updates)
        steps = state.steps + 1
        target_params = optax.periodic_update(params, state.target_params, steps, config.target_update_period)
        return TrainingState(params, target_params, opt_state, steps), {"loss": loss, "mean_q": mean_q}, {}

    return update_step
# --8<-- [end:learning]


# --8<-- [start:builder]
class QLearningBuilder(ActorLearnerBuilder):
    """Uniform replay of n-step transitions, an epsilon-greedy policy, and the `SGDLearner` shell."""

    def __init__(self, config: QLearningConfig):
        self.config = config

    def make_policy(self, *, networks, environment_spec, evaluation=False):
        c = self.config
        schedule = optax.linear_schedule(c.epsilon_init, c.epsilon_final, c.epsilon_decay_steps)
        return epsilon_greedy_core(networks.apply, (lambda steps: 0.0) if evaluation else schedule)

    def make_replay_tables(self, *, environment_spec, policy):
        from acmelike import replay  # table descriptions: no Reverb, which only a Reverb-backed runner loads
        from acmelike.adders.transition import NStepTransitionAdder

        c = self.config
        # The learner may run ahead of the ratio by one learner step's samples, or by the configured slack.
        slack = max(c.batch_size * c.num_sgd_steps_per_step,
                    c.min_replay_size * c.samples_per_insert_tolerance_rate * c.samples_per_insert)
        limiter = replay.sample_to_insert_ratio(samples_per_insert=c.samples_per_insert,
                                                min_size_to_sample=c.min_replay_size, error_buffer=slack)
        signature = NStepTransitionAdder.signature(environment_spec, policy_extras_spec(policy))
        return [replay.uniform_table(name=c.replay_table_name, max_size=c.max_replay_size, rate_limiter=limiter,
                                     signature=signature)]

    def make_dataset_iterator(self, *, replay_client):
        from acmelike import replay

        c = self.config  # one learner step samples num_sgd_steps_per_step batches at once
        return replay.make_dataset_iterator(client=replay_client, table=c.replay_table_name,
                                            batch_size=c.batch_size * c.num_sgd_steps_per_step)

    def make_adder(self, *, replay_client, environment_spec, policy):
        from acmelike.adders.transition import NStepTransitionAdder

        c = self.config
        return NStepTransitionAdder(client=replay_client, table_names=[c.replay_table_name], n_step=c.n_step,
                                    discount=c.discount)

    def make_learner(self, *, random_key, networks, dataset, environment_spec, replay_client=None, counter=None,
                     logger=None):
        parts = LearningParts(
            state=init_training_state(networks, self.config, random_key),
            update_step=make_update_step(networks, self.config),
            loss_keys=("loss",),  # the NaN guard: an update whose loss is not finite is never applied
            policy_params=lambda state: state.params,  # what actors fetch as "policy"
        )
        return parts.make_learner(dataset, name="Q-learning learner", counter=counter, logger=logger,
                                  num_sgd_steps_per_step=self.config.num_sgd_steps_per_step)
# --8<-- [end:builder]


# --8<-- [start:definition]
AGENT = AgentDefinition(
    name="qlearning",  # how logs, summaries, checkpoints and snapshots name it
    config_class=QLearningConfig,
    make_builder=QLearningBuilder,
    make_networks=make_networks,
    action_space="discrete",
    smoke_config=dict(min_replay_size=20, hidden_sizes=(16,)),  # learns within a few hundred fake-environment steps
)
# --8<-- [end:definition]


# --8<-- [start:train]
def train(max_num_actor_steps: int = 30_000, seed: int = 0, stop_at_average_return=None, replay: str = "local",
          **config_fields) -> dict:
    """Trains the agent on CartPole-v1 in one process; returns the run's summary (a `RunResult`). `replay="local"`
    (the default): the seeded in-process replay, which makes two runs of one seed the same run; "reverb" (the
    classic stack): an embedded Reverb server, as distributed programs use."""
    config = QLearningConfig(**config_fields)
    experiment = launch.ExperimentConfig(
        builder=QLearningBuilder(config),
        environment_factory=functools.partial(make_gymnasium_environment, "CartPole-v1"),
        network_factory=functools.partial(make_networks, config=config),
        max_num_actor_steps=max_num_actor_steps,
        seed=seed,
        stop_at_average_return=stop_at_average_return,  # of the last 20 episodes
        replay=replay,
        agent="qlearning",
        environment="CartPole-v1",
    )
    return launch.run_single_process(experiment)


if __name__ == "__main__":
    print(json.dumps(dict(train())))
# --8<-- [end:train]
