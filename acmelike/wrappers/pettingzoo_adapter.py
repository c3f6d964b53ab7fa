"""PettingZooToDmEnv: a PettingZoo Parallel-API environment seen as a dm_env.Environment with per-agent dicts.

Every field of a timestep is a dict keyed by agent id, always over all of `possible_agents` in their order, so
the structure (and hence a replay table's signature) never changes within or between episodes:

    observation[id] = AgentObservation(observation, active)
    reward[id]      float32 scalar: what agent `id` received for the last joint action (0 once it has left)
    discount[id]    float32 scalar: 0 if `id` terminated on the last step, 1 if it carries on or was truncated
    action[id]      what `step` takes: one action per agent

An agent is *active* exactly when it is in the PettingZoo env's `agents` list: it acts on this observation.
Agents leave (terminate or truncate) at their own times. How an absent agent is represented:

    step at which agent `id` leaves   reward: its last reward; discount: 0 (terminated) or 1 (truncated);
                                      observation: its final observation; active False
    every later step of the episode   reward 0, discount 0, observation: its final observation (held, not
                                      new), active False
    an agent not (yet) in the episode reward 0, discount 0, observation zeros, active False

So no step is invented: a learner keeps exactly the steps whose observation is active (the action taken there
is real) and bootstraps each agent's last step from its final observation with its own discount. The actions
given for inactive agents are never passed to the env. The episode ends (`LAST`, every agent inactive) when
the env's `agents` list is empty.

Spaces: each agent's Discrete/Box spaces map to dm_env specs as in `gymnasium_adapter` (float32/int32).
"""

import importlib
import operator
import threading
from typing import Any, Dict, Mapping, NamedTuple, Optional

import dm_env
import numpy as np
from dm_env import specs

from acmelike.wrappers.gymnasium_adapter import space_to_spec
from acmelike.wrappers.single_precision import single_precision_spec


class AgentObservation(NamedTuple):
    """One agent's part of a multi-agent observation: its observation, and whether it acts on it."""

    observation: Any
    active: Any  # bool scalar


def agent_ids(environment_spec) -> tuple:
    """The agent ids of a multi-agent environment spec (its action dict's keys), in the environment's order."""
    return tuple(environment_spec.actions)


def is_multiagent_spec(environment_spec) -> bool:
    """Whether `environment_spec` is a multi-agent one: dicts keyed by agent id, observations `AgentObservation`s."""
    observations = environment_spec.observations
    return isinstance(observations, dict) and bool(observations) and all(
        isinstance(value, AgentObservation) for value in observations.values()
    )


ACTIVE_SPEC = specs.Array(shape=(), dtype=np.bool_, name="active")  # every agent's `AgentObservation.active`
_TRUE, _FALSE = np.bool_(True), np.bool_(False)
_ZERO, _ONE = np.float32(0.0), np.float32(1.0)


class PettingZooToDmEnv(dm_env.Environment):
    """Adapts a PettingZoo `ParallelEnv` to `dm_env.Environment`; see the module docstring for the format.

    Args:
      env: the Parallel-API environment (e.g. `mpe2.simple_spread_v3.parallel_env()`).
      seed: passed to `env.reset(seed=...)` on the first reset only; later episodes continue that RNG.
      name: how errors name the environment.

    `step` raises a ValueError naming the agent when an active agent has no action, an action names an agent
    the environment does not know, or an action does not fit the agent's action spec.
    """

    def __init__(self, env, seed: Optional[int] = None, name: Optional[str] = None):
        self._env = env
        self._seed = seed
        self._seeded = False
        self._name = name or env.metadata.get("name", type(env).__name__)
        self._ids = tuple(env.possible_agents)
        self._observation_specs = {
            agent: single_precision_spec(space_to_spec(env.observation_space(agent), "observation", "observation"))
            for agent in self._ids
        }
        self._action_specs = {
            agent: single_precision_spec(space_to_spec(env.action_space(agent), f"action_{agent}", "action"))
            for agent in self._ids
        }
        self._discrete = {agent: isinstance(spec, specs.DiscreteArray) for agent, spec in self._action_specs.items()}
        self._held: Dict[str, np.ndarray] = {}  # each agent's latest observation
        self._active: Dict[str, bool] = {}
        self._reset_next_step = True

    @property
    def pettingzoo_env(self):
        return self._env

    def _observation(self, agent, observation) -> np.ndarray:
        return np.asarray(observation, dtype=self._observation_specs[agent].dtype)

    def _observations(self) -> Dict[str, AgentObservation]:
        return {
            agent: AgentObservation(self._held[agent], _TRUE if self._active[agent] else _FALSE) for agent in self._ids
        }

    def reset(self) -> dm_env.TimeStep:
        observations, _ = self._env.reset() if self._seeded else self._env.reset(seed=self._seed)
        self._seeded = True
        self._reset_next_step = False
        live = set(self._env.agents)
        for agent in self._ids:
            spec = self._observation_specs[agent]
            self._held[agent] = (self._observation(agent, observations[agent]) if agent in observations
                                 else np.zeros(spec.shape, spec.dtype))
            self._active[agent] = agent in live
        return dm_env.restart(self._observations())

    def step(self, action: Mapping[str, Any]) -> dm_env.TimeStep:
        if self._reset_next_step:
            return self.reset()
        actions = self._joint_action(action)
        observations, rewards, terminations, _, _ = self._env.step(actions)
        live = set(self._env.agents)
        reward, discount = {}, {}
        for agent in self._ids:
            acted = agent in actions
            if agent in observations:
                self._held[agent] = self._observation(agent, observations[agent])
            reward[agent] = np.float32(rewards.get(agent, 0.0)) if acted else _ZERO
            discount[agent] = _ZERO if not acted or terminations.get(agent, False) else _ONE
            self._active[agent] = agent in live
        if not live:
            self._reset_next_step = True
            return dm_env.TimeStep(dm_env.StepType.LAST, reward, discount, self._observations())
        return dm_env.transition(reward, self._observations(), discount)

    def _joint_action(self, action: Mapping[str, Any]) -> Dict[str, Any]:
        """The actions of the active agents, checked and converted to what the env takes."""
        if not isinstance(action, Mapping):
            raise ValueError(
                f"{self._name} takes a dict of actions keyed by agent id ({', '.join(self._ids)}); received "
                f"{type(action).__name__} {action!r}."
            )
        unknown = [agent for agent in action if agent not in self._action_specs]
        if unknown:
            raise ValueError(
                f"{self._name} has no agent {unknown[0]!r} (actions were given for {sorted(action)}); its agents "
                f"are {', '.join(self._ids)}."
            )
        joint = {}
        for agent in self._ids:
            if not self._active[agent]:
                continue  # absent agents' actions (placeholders of a fixed-structure nest) are not passed on
            if agent not in action:
                raise ValueError(
                    f"{self._name}: no action for agent {agent!r}, which is active. Expected an action for each "
                    f"active agent ({', '.join(a for a in self._ids if self._active[a])}) matching "
                    f"{self._action_specs[agent]!r}."
                )
            joint[agent] = self._agent_action(agent, action[agent])
        return joint

    def _agent_action(self, agent: str, action):
        spec = self._action_specs[agent]
        if self._discrete[agent]:
            try:
                index = operator.index(action)
            except TypeError:
                index = None
            if index is None or not 0 <= index < spec.num_values:
                raise ValueError(
                    f"{self._name}: invalid action {action!r} for agent {agent!r}; expected an integer in "
                    f"[0, {spec.num_values - 1}] ({spec!r})."
                )
            return index
        array = np.asarray(action, dtype=spec.dtype)
        if array.shape != spec.shape or not (np.all(array >= spec.minimum) and np.all(array <= spec.maximum)):
            raise ValueError(
                f"{self._name}: invalid action {action!r} for agent {agent!r}; expected an action matching {spec!r}."
            )
        return array

    def observation_spec(self) -> Dict[str, AgentObservation]:
        return {agent: AgentObservation(spec, ACTIVE_SPEC) for agent, spec in self._observation_specs.items()}

    def action_spec(self) -> Dict[str, specs.Array]:
        return dict(self._action_specs)

    def reward_spec(self) -> Dict[str, specs.Array]:
        return {agent: specs.Array(shape=(), dtype=np.float32, name="reward") for agent in self._ids}

    def discount_spec(self) -> Dict[str, specs.BoundedArray]:
        return {
            agent: specs.BoundedArray(shape=(), dtype=np.float32, minimum=0.0, maximum=1.0, name="discount")
            for agent in self._ids
        }

    def close(self) -> None:
        with PYGAME_LOCK:  # MPE's close calls pygame.quit(), which the other environments of the process share
            self._env.close()


# MPE environments set up pygame's freetype and a font in their constructor, and tear pygame down in close():
# neither is thread-safe, and actors of a local_mt program build and close their environments at the same time
# (without the lock: "malloc(): unsorted double linked list corrupted", about one run in three).
PYGAME_LOCK = threading.Lock()

# `--env mpe/<name>`: the MPE2 environments (`pip install acmelike[multiagent]`), by module name.
MPE_ENVIRONMENTS = ("simple_adversary_v3", "simple_spread_v3")
MPE_PREFIX = "mpe/"


def check_pettingzoo_id(name: str) -> None:
    """ValueError unless `name` is an `mpe/<environment>` this adapter knows, listing them."""
    if not name.startswith(MPE_PREFIX) or name[len(MPE_PREFIX):] not in MPE_ENVIRONMENTS:
        raise ValueError(
            f"Unknown multi-agent environment {name!r}; known: {', '.join(MPE_PREFIX + n for n in MPE_ENVIRONMENTS)}."
        )


def make_pettingzoo_environment(name: str, seed: int, render_mode: Optional[str] = None) -> PettingZooToDmEnv:
    """The environment `mpe/<environment>` (e.g. "mpe/simple_spread_v3", default arguments, discrete actions);
    `render_mode="rgb_array"` lets `pettingzoo_env.render()` return frames (as `launch.cli.evaluate --video` does)."""
    check_pettingzoo_id(name)
    module = importlib.import_module(f"mpe2.{name[len(MPE_PREFIX):]}")
    with PYGAME_LOCK:
        environment = module.parallel_env(render_mode=render_mode)
    return PettingZooToDmEnv(environment, seed=seed, name=name)
