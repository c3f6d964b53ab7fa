"""IPPO's and MAPPO's fully jitted form (Anakin): the builder's policy and IPPO's own update step on sequences
of per-agent `Step`s, over multi-agent JAX environments (`acmelike.anakin.jaxmarl`)."""

from acmelike.anakin import JaxEnvironment, on_policy_agent
from acmelike.anakin.agent import AnakinAgent
from agents.ippo import learning
from agents.ippo.builder import IPPOBuilder
from agents.ippo.networks import make_networks


def make_anakin_agent(environment: JaxEnvironment, config) -> AnakinAgent:
    """`config.batch_size` environments, each writing one sequence of `unroll_length + 1` joint steps per update,
    the rows IPPO's queue would serve (MAPPO when `config.centralised_critic`)."""
    networks = make_networks(environment.spec, config)
    builder = IPPOBuilder(config)
    return on_policy_agent(
        builder.name.lower(), environment, config,
        policy=builder.make_policy(networks=networks, environment_spec=environment.spec),
        init_training_state=lambda key: learning.init_training_state(networks, config, key),
        update_step=learning.make_update_step(networks, config),
    )
