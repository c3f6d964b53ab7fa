"""MPO's fully jitted form (Anakin): its builder's policy and its own pure update step, with on-device replay."""

from typing import Optional

from acmelike.anakin import JaxEnvironment
from acmelike.anakin.agent import AnakinAgent
from acmelike.anakin.off_policy import off_policy_agent
from agents.mpo.builder import MPOBuilder
from agents.mpo.networks import make_networks


def make_anakin_agent(environment: JaxEnvironment, config, num_envs: Optional[int] = None) -> AnakinAgent:
    """MPO through `acmelike.anakin.off_policy`, on a continuous-action JAX environment (gymnax/Pendulum-v1):
    by default one environment per transition an iteration inserts (`num_sgd_steps_per_step * batch_size /
    samples_per_insert`), each writing one step per iteration, and uniform replay (as its replay table is).
    """
    networks = make_networks(environment.spec, config)
    return off_policy_agent("mpo", environment, MPOBuilder(config), networks, num_envs=num_envs)
