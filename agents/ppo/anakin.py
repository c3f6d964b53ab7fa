"""PPO's fully jitted form (Anakin): its builder's policy and its own pure update step, over JAX environments."""

from acmelike.anakin import JaxEnvironment, on_policy_agent
from acmelike.anakin.agent import AnakinAgent
from agents.ppo import learning
from agents.ppo.builder import PPOBuilder
from agents.ppo.networks import make_networks


def make_anakin_agent(environment: JaxEnvironment, config) -> AnakinAgent:
    """PPO: `config.batch_size` environments, each writing one sequence of `unroll_length + 1` rows per update
    (the last row, the next sequence's first, only bootstraps), exactly as PPO's queue would serve them."""
    networks = make_networks(environment.spec, config)
    return on_policy_agent(
        "ppo", environment, config,
        policy=PPOBuilder(config).make_policy(networks=networks, environment_spec=environment.spec),
        init_training_state=lambda key: learning.init_training_state(networks, config, key),
        update_step=learning.make_update_step(networks, config),
    )
