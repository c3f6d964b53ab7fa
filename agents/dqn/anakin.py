"""DQN's fully jitted form (Anakin): its builder's policy and its own pure update step, with on-device replay."""

from acmelike.anakin import JaxEnvironment
from acmelike.anakin.agent import SEEDS_AXIS, AnakinAgent
from acmelike.anakin.off_policy import off_policy_agent
from agents.dqn.builder import DQNBuilder
from agents.dqn.learning import make_update_step
from agents.dqn.networks import make_networks


def make_anakin_agent(environment: JaxEnvironment, config, num_envs: int = 4) -> AnakinAgent:
    """DQN through `acmelike.anakin.off_policy`: `num_envs` environments (4 by default, each writing
    `num_sgd_steps_per_step * batch_size / samples_per_insert / num_envs` steps per iteration) and prioritized
    replay as the config sets it (`priority_exponent`, `importance_sampling_exponent`; 0: uniform). Each
    environment's actor keeps its own exploration clock, as distributed actors do: epsilon reaches
    `epsilon_final` after `epsilon_decay_steps` steps of each environment. The update step decides once for every
    seed whether the target network's copy is due (`seeds_axis`), so the other steps do not copy it.
    """
    networks = make_networks(environment.spec, config)
    return off_policy_agent("dqn", environment, DQNBuilder(config), networks, num_envs=num_envs,
                            priority_exponent=config.priority_exponent,
                            update_step=make_update_step(networks, config, seeds_axis=SEEDS_AXIS))
