"""TD3's fully jitted form (Anakin): its builder's policy and its own pure update step, with on-device replay."""

from typing import Optional

from acmelike.anakin import JaxEnvironment
from acmelike.anakin.agent import SEEDS_AXIS, AnakinAgent
from acmelike.anakin.off_policy import off_policy_agent
from agents.td3.builder import TD3Builder
from agents.td3.learning import make_update_step
from agents.td3.networks import make_networks


def make_anakin_agent(environment: JaxEnvironment, config, num_envs: Optional[int] = None) -> AnakinAgent:
    """TD3 through `acmelike.anakin.off_policy`, on a continuous-action JAX environment (gymnax/Pendulum-v1):
    by default one environment per transition an iteration inserts (`num_sgd_steps_per_step * batch_size /
    samples_per_insert`), each writing one step per iteration, and uniform replay (as its replay table is). The
    update step decides once for every seed whether the policy's delayed update is due (`seeds_axis`), so the
    steps between policy updates pay for the critics' update only.
    """
    networks = make_networks(environment.spec, config)
    return off_policy_agent("td3", environment, TD3Builder(config), networks, num_envs=num_envs,
                            update_step=make_update_step(networks, config, seeds_axis=SEEDS_AXIS))
