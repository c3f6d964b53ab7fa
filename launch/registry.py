"""The agents the command line knows, as data, and how an ExperimentConfig is made from names.

Each entry names a package whose `AGENT` is an `acmelike.builders.AgentDefinition` (config class, builder,
network factory, action space, smoke-test config). Adding an agent is one line here; the command line, the
error messages and the registry's smoke tests (tests/test_registry.py) follow from it.
"""

import functools
import importlib
from typing import Any, Callable, Dict, List, Optional, Sequence

from acmelike.builders import AgentDefinition
from launch.config_overrides import apply_overrides
from launch.experiment import ExperimentConfig

# name -> package defining AGENT (imported only when the agent is used).
AGENTS: Dict[str, str] = {
    "dqn": "agents.dqn",
    "ppo": "agents.ppo",
}


def agent_definition(name: str) -> AgentDefinition:
    """The registered agent `name`; ValueError listing the choices if unknown."""
    if name not in AGENTS:
        raise ValueError(f"Unknown agent {name!r}. Choose one of: {', '.join(sorted(AGENTS))}.")
    definition = importlib.import_module(AGENTS[name]).AGENT
    if definition.name != name:
        raise ValueError(f"Registry entry {name!r} points at {AGENTS[name]}, whose AGENT is named {definition.name!r}.")
    return definition


def agents_for_action_space(action_space: str) -> List[str]:
    """Registered agents whose networks take `action_space` ("discrete" or "continuous")."""
    return sorted(name for name in AGENTS if agent_definition(name).action_space == action_space)


def make_agent_config(name: str, overrides: Sequence[str] = ()):
    """The agent's default config with `overrides` ("field=value") applied and validated."""
    return apply_overrides(agent_definition(name).config_class(), overrides)


def environment_threshold(environment: str) -> Optional[float]:
    """gymnasium's `reward_threshold` for `environment`, if it defines one."""
    import gymnasium

    spec = gymnasium.envs.registry.get(environment)
    return None if spec is None or spec.reward_threshold is None else float(spec.reward_threshold)


def make_experiment_config(
    *,
    agent: str,
    environment: str,
    max_num_actor_steps: int,
    seed: int = 0,
    run_dir: Optional[str] = None,
    evaluation_every: int = 0,
    progress_period_s: float = 5.0,
    stop_at_average_return: Optional[float] = None,
    config_overrides: Sequence[str] = (),
    target_return: Optional[float] = None,
    return_window: int = 20,
    environment_factory: Optional[Callable[[int], Any]] = None,
    num_envs: int = 1,
) -> ExperimentConfig:
    """An ExperimentConfig for a registered agent on a gymnasium environment id.

    The success threshold is gymnasium's `reward_threshold` for the environment, else `target_return`, else none.
    Unknown names and bad overrides raise ValueError naming what was wrong, before anything is built. A
    dm_env environment of your own comes in as `environment_factory` (seed -> environment), with `environment` as
    its name.
    """
    from acmelike.wrappers import check_gymnasium_id, make_gymnasium_environment, make_vector_environment

    definition = agent_definition(agent)
    agent_config = make_agent_config(agent, config_overrides)
    threshold = None
    vector_environment_factory = None
    if environment_factory is None:
        vector_environment_factory = functools.partial(make_vector_environment, environment)
        check_gymnasium_id(environment)
        threshold = environment_threshold(environment)
        environment_factory = functools.partial(make_gymnasium_environment, environment)
    config = ExperimentConfig(
        builder=definition.make_builder(agent_config),
        environment_factory=environment_factory,
        network_factory=functools.partial(definition.make_networks, config=agent_config),
        max_num_actor_steps=max_num_actor_steps,
        seed=seed,
        run_dir=run_dir,
        evaluation_every=evaluation_every,
        agent_name=agent,
        environment_name=environment,
        progress_period_s=progress_period_s,
        threshold=threshold if threshold is not None else target_return,
        return_window=return_window,
        stop_at_average_return=stop_at_average_return,
        num_envs=num_envs,
        vector_environment_factory=vector_environment_factory,
    )
    check_agent_fits_environment(config, definition)
    return config


def check_agent_fits_environment(config: ExperimentConfig, definition: AgentDefinition) -> None:
    """Builds the networks once for the environment's spec; a mismatch is a ValueError that also names the
    registered agents whose action space fits the environment."""
    from dm_env import specs

    from launch.construction import read_environment_spec

    spec = read_environment_spec(config)
    try:
        config.network_factory(spec)
    except ValueError as error:
        kind = "discrete" if isinstance(spec.actions, specs.DiscreteArray) else "continuous"
        fitting = agents_for_action_space(kind)
        raise ValueError(
            f"{error} Agents for {kind} actions: {', '.join(fitting) or 'none registered'}."
        ) from None
