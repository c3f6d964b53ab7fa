"""JaxMARL's MPE environments as a `JaxEnvironment` in the multi-agent format of the PettingZoo adapter.

Every field is a dict keyed by agent id (`acmelike.wrappers.pettingzoo_adapter` defines the format), so IPPO and
MAPPO see the same specs and timesteps as on `mpe/<name>`:

    observation[id] = AgentObservation(observation float32, active bool)   active False at the episode's last step
    reward[id], discount[id]                                              float32 scalars
    action[id]                                                            int32 scalar

MPE agents never leave before the episode ends and episodes end only by the clock, so every agent is active
until the last step, and every discount is 1 (truncation: bootstrap from the last observation).

Where `jaxmarl/MPE_simple_spread_v3` differs from PettingZoo's mpe2 `simple_spread_v3` (N=3, local_ratio 0.5,
max_cycles 25), read from both sources (jaxmarl 0.2.0, mpe2):

  - Episode length: JaxMARL's `step_env` reports done when the step count *before* the step reaches
    `max_steps` (25), so its episodes last 26 steps. Here an episode ends after `max_steps` steps, as mpe2's.
  - Same: 3 agents, 18-dim observations in the same order (own velocity, own position, landmarks relative,
    other agents relative, their communication), 5 actions (no-op, left, right, down, up), start positions
    uniform in [-1, 1]^2, agent radius 0.15, per-agent reward local_ratio * (-1 per other agent touching it)
    + (1 - local_ratio) * (-sum over landmarks of the nearest agent's distance). Physics (damping 0.25,
    dt 0.1, contact force 100, acceleration 5) are JaxMARL's reimplementation of the same world and were not
    compared step by step, so returns are alike in scale but not identical episode by episode.

`jaxmarl` needs Python >= 3.11 (`pip install jaxmarl`); without it `make_jaxmarl_environment` raises ValueError
saying so.
"""

from typing import Dict

import jax.numpy as jnp
import numpy as np
from dm_env import specs

from acmelike.anakin.environment import JaxEnvironment, JaxTimeStep, spec_from_space, task_of
from acmelike.specs import EnvironmentSpec
from acmelike.wrappers.pettingzoo_adapter import ACTIVE_SPEC, AgentObservation

JAXMARL_PREFIX = "jaxmarl/"
# JaxMARL's environments that are multi-particle worlds (`SimpleMPE`): time-limited only, fixed agents.
_MPE = "MPE_"


def _per_agent(ids, value) -> Dict[str, object]:
    return {agent: value for agent in ids}


def check_jaxmarl_id(name: str) -> str:
    """The JaxMARL id of `name` ("jaxmarl/MPE_simple_spread_v3" or "MPE_simple_spread_v3"); ValueError naming the
    missing package if jaxmarl does not import, or listing the supported environments if `name` is not one."""
    try:
        import jaxmarl
    except ImportError as error:
        raise ValueError(
            f"Environment {name!r} needs jaxmarl, which is not installed: pip install jaxmarl (Python >= 3.11)."
        ) from error
    supported = [env for env in jaxmarl.registered_envs if env.startswith(_MPE)]
    return task_of(name, JAXMARL_PREFIX, supported, "JaxMARL environment",
                   " (--launch anakin runs JaxMARL's MPE environments).")


def make_jaxmarl_environment(name: str) -> JaxEnvironment:
    """Makes JaxMARL MPE environment `name` (`check_jaxmarl_id`'s names and errors) with its default arguments;
    ValueError naming the agent whose actions are not discrete."""
    short = check_jaxmarl_id(name)
    import jaxmarl  # importable: checked above

    env = jaxmarl.make(short)
    ids = tuple(env.agents)
    for agent in ids:
        if not hasattr(env.action_space(agent), "n"):
            raise ValueError(
                f"{JAXMARL_PREFIX + short}: agent {agent!r} has continuous actions (a Box of shape "
                f"{tuple(env.action_space(agent).shape)}); IPPO/MAPPO need discrete ones."
            )

    def observe(observation, active):
        return {agent: AgentObservation(observation[agent].astype(jnp.float32), active) for agent in ids}

    def reset(key):
        observation, state = env.reset(key)
        return state, observe(observation, jnp.asarray(True))

    def step(key, state, action):
        # `step_env`, not `step`: `step` resets inside and would replace the episode's last observation.
        observation, state, reward, _, _ = env.step_env(key, state, action)
        last = state.step >= env.max_steps  # JaxMARL's own done comes one step later (module docstring)
        timestep = JaxTimeStep(
            observation=observe(observation, jnp.logical_not(last)),
            reward={agent: jnp.asarray(reward[agent], jnp.float32) for agent in ids},
            discount=_per_agent(ids, jnp.ones((), jnp.float32)),
            last=last,
        )
        return state, timestep

    spec = EnvironmentSpec(
        observations={
            # Unbounded (MPE's Box is (-inf, inf)), as the PettingZoo adapter gives the same observations.
            agent: AgentObservation(
                specs.Array(shape=tuple(env.observation_space(agent).shape), dtype=np.float32, name="observation"),
                ACTIVE_SPEC,
            )
            for agent in ids
        },
        actions={agent: spec_from_space(env.action_space(agent), f"action_{agent}") for agent in ids},
        rewards=_per_agent(ids, specs.Array(shape=(), dtype=np.float32, name="reward")),
        discounts=_per_agent(
            ids, specs.BoundedArray(shape=(), dtype=np.float32, minimum=0.0, maximum=1.0, name="discount")
        ),
    )
    return JaxEnvironment(name=JAXMARL_PREFIX + short, spec=spec, reset=reset, step=step)
