"""The agents the command line knows, and how an ExperimentConfig is made from names."""

import functools
from typing import Callable, Dict, Optional, Tuple

from acmelike.builders import ActorLearnerBuilder
from launch.experiment import ExperimentConfig


def _dqn() -> Tuple[ActorLearnerBuilder, Callable]:
    from agents.dqn import DQNBuilder, DQNConfig, make_networks

    config = DQNConfig()
    return DQNBuilder(config), functools.partial(make_networks, hidden_sizes=config.hidden_sizes)


def _ppo() -> Tuple[ActorLearnerBuilder, Callable]:
    from agents.ppo import PPOBuilder, PPOConfig, make_networks

    config = PPOConfig()
    return PPOBuilder(config), functools.partial(make_networks, hidden_sizes=config.hidden_sizes)


# name -> () -> (builder with default config, network_factory)
AGENTS: Dict[str, Callable[[], Tuple[ActorLearnerBuilder, Callable]]] = {"dqn": _dqn, "ppo": _ppo}


def make_agent(name: str) -> Tuple[ActorLearnerBuilder, Callable]:
    """Returns (builder, network_factory) for an agent name; ValueError listing the choices if unknown."""
    if name not in AGENTS:
        raise ValueError(f"Unknown agent {name!r}. Choose one of: {', '.join(sorted(AGENTS))}.")
    return AGENTS[name]()


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
) -> ExperimentConfig:
    """An ExperimentConfig for a named agent on a named gymnasium environment.

    Unknown names raise ValueError listing the choices, before anything is built.
    """
    from acmelike.wrappers import check_gymnasium_id, make_gymnasium_environment

    builder, network_factory = make_agent(agent)
    check_gymnasium_id(environment)
    return ExperimentConfig(
        builder=builder,
        environment_factory=functools.partial(make_gymnasium_environment, environment),
        network_factory=network_factory,
        max_num_actor_steps=max_num_actor_steps,
        seed=seed,
        run_dir=run_dir,
        evaluation_every=evaluation_every,
        agent_name=agent,
        environment_name=environment,
        progress_period_s=progress_period_s,
        stop_at_average_return=stop_at_average_return,
    )
