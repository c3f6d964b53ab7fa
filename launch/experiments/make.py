"""Experiment configs from names (agent, gymnasium id, Minari dataset id) and `--config` overrides.

    config = make_experiment_config(agent="dqn", environment="CartPole-v1", max_num_actor_steps=50_000,
                                    config_overrides=["learning_rate=5e-4"])
    config = make_experiment_config(agent="sac", environment="Hopper-v5", max_num_actor_steps=100_000,
                                    preset="mujoco")   # launch/presets/mujoco.json, before any overrides
    config = make_experiment_config(agent="sac", environment="dm_control/cartpole-swingup",
                                    max_num_actor_steps=100_000)   # the Control Suite (the dmc extra)
    config = make_experiment_config(agent="sac", environment="dm_control/cheetah-run", action_repeat=4,
                                    max_num_actor_steps=25_000)    # each action held 4 steps: 100k env steps
    offline = make_offline_experiment_config(agent="bc", dataset="cartpole/expert-v0", environment="CartPole-v1",
                                             max_num_learner_steps=2_000)

Every name is checked against the registry (`launch.registry`) and the environment's spaces against the agent's
networks before anything is built; each mistake is a ValueError that says what would fit.
"""

import difflib
import functools
import sys
import warnings
from typing import Any, Callable, List, NamedTuple, Optional, Sequence, Union

import gymnasium
from dm_env import specs

from acmelike.anakin import JAX_ENVIRONMENT_PREFIXES
from acmelike.builders import AgentDefinition
from acmelike.environments import CONTROL_SUITE_PREFIX, check_control_suite_id, make_control_suite_environment
from acmelike.offline import MinariIterator, check_dataset_fits
from acmelike.specs import make_environment_spec
from acmelike.wrappers import (
    SinglePrecisionWrapper,
    check_gymnasium_id,
    concatenate_state_nest,
    make_gymnasium_environment,
    make_vector_environment,
)
from acmelike.wrappers.gymnasium_adapter import NO_EXTRA_DEPENDENCY_MODULES
from acmelike.wrappers.pettingzoo_adapter import (
    MPE_ENVIRONMENTS,
    MPE_PREFIX,
    check_pettingzoo_id,
    is_multiagent_spec,
    make_pettingzoo_environment,
)
from launch.experiments.config import ExperimentConfig, OfflineExperimentConfig
from launch.experiments.overrides import apply_overrides, parse_assignment
from launch.experiments.parts import read_environment_spec
from launch.experiments.presets import preset_overrides
from launch.registry import AGENTS, agent_definition, agents_for_action_space, offline_agents, online_agents


def make_agent_config(agent: Union[str, AgentDefinition], overrides: Sequence[str] = (),
                      preset: Optional[str] = None, environment: Optional[str] = None):
    """The agent's default config with the preset's values for `environment` (`launch.experiments.presets`), then
    `overrides` ("field=value"), applied and validated: an override wins over the preset. ValueError naming the
    preset if it is unknown, has no entry for the agent, or sets a field the agent's config lacks. `agent`: a
    registered name, or an `AgentDefinition` of your own."""
    definition = resolve_agent(agent)
    name = definition.name
    default = definition.config_class()
    if preset is None:
        return apply_overrides(default, overrides)
    values = preset_overrides(preset, name, environment)
    try:
        apply_overrides(default, values)
    except ValueError as error:
        raise ValueError(f"--preset {preset} ({name} on {environment}): {error}") from None
    return apply_overrides(default, [*values, *overrides])


def resolve_agent(agent: Union[str, AgentDefinition]) -> AgentDefinition:
    """The registered agent named `agent`, or `agent` itself, an `AgentDefinition` (yours need not be registered).
    ValueError if a definition of your own takes a registered agent's name."""
    if not isinstance(agent, AgentDefinition):
        return agent_definition(agent)
    if agent.name in AGENTS and agent_definition(agent.name) is not agent:
        raise ValueError(
            f"Your AgentDefinition is named {agent.name!r}, which is a registered agent's name ({AGENTS[agent.name]}): "
            f"snapshots and run directories name their agent, so give yours a name of its own."
        )
    return agent


def definition_reference(definition: AgentDefinition) -> Optional[str]:
    """Where an agent of your own is defined, as "module:attribute": a loaded module holding it (its builder's,
    config class's or network factory's first), and the name it has there; for a script run as `__main__`, the
    script's path. None for a registered agent. Only ever shown to you, never imported (a run directory does not
    choose code to run)."""
    if definition.name in AGENTS:
        return None
    owners = [getattr(owner, "__module__", None) for owner in
              (definition.make_builder, definition.config_class, definition.make_networks)]
    for module_name in dict.fromkeys([name for name in owners if name] + sorted(sys.modules)):
        module = sys.modules.get(module_name)
        namespace = getattr(module, "__dict__", None) or {}  # sys.modules may hold objects that are not modules
        names = [name for name, value in list(namespace.items()) if value is definition]
        if names:
            where = getattr(module, "__file__", module_name) if module_name == "__main__" else module_name
            return f"{where}:{names[0]}"
    return f"{owners[0] or '<unknown module>'}:<an AgentDefinition named {definition.name!r}>"


def environment_threshold(environment: str) -> Optional[float]:
    """gymnasium's `reward_threshold` for `environment`, if it defines one."""
    spec = gymnasium.envs.registry.get(environment)
    return None if spec is None or spec.reward_threshold is None else float(spec.reward_threshold)


def make_experiment_config(
    *,
    agent: Union[str, AgentDefinition],
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
    inference: str = "local",
    replay: str = "local",
    preset: Optional[str] = None,
    action_repeat: int = 1,
) -> ExperimentConfig:
    """An ExperimentConfig for an agent on a gymnasium environment id.

    `agent` is a registered agent's name (`launch.registry`), or an `AgentDefinition` of your own, from any module
    or script: it runs on every engine, with a run directory, checkpoints and resume, unregistered (the config's
    `agent_reference` records where it lives; docs/tutorial.md, "Run it as a distributed program").

    The success threshold is `target_return` if given, else gymnasium's `reward_threshold` for the environment, else
    none.
    The agent's config is its defaults, then the `preset`'s values for the agent on `environment` (if given),
    then `config_overrides`. Unknown names and bad overrides raise ValueError naming what was wrong, before
    anything is built. A dm_env environment of your own comes in as `environment_factory` (seed -> environment),
    with `environment` as its name: it is seen in 32 bits, and a dict (nest) of state observations as one vector
    (`acmelike.wrappers.concatenate_state_nest`), as every single-agent network takes them. `action_repeat` K > 1
    holds each action for K environment steps (`ExperimentConfig.action_repeat`); step counts are then the agent's.
    """
    definition = resolve_agent(agent)
    _check_online_run(definition, num_envs=num_envs, inference=inference, action_repeat=action_repeat)
    agent_config = make_agent_config(definition, config_overrides, preset=preset, environment=environment)
    environment_factory, vector_environment_factory, threshold = _online_environments(
        environment, environment_factory, definition)
    config = ExperimentConfig(
        builder=definition.make_builder(agent_config),
        environment_factory=environment_factory,
        network_factory=functools.partial(definition.make_networks, config=agent_config),
        max_num_actor_steps=max_num_actor_steps,
        seed=seed,
        run_dir=run_dir,
        evaluation_every=evaluation_every,
        agent=definition.name,
        environment=environment,
        progress_period_s=progress_period_s,
        target_return=target_return if target_return is not None else threshold,
        return_window=return_window,
        stop_at_average_return=stop_at_average_return,
        num_envs=num_envs,
        vector_environment_factory=vector_environment_factory,
        inference=inference,
        replay=replay,
        preset=preset,
        action_repeat=action_repeat,
        agent_reference=definition_reference(definition),
    )
    check_agent_fits_environment(config, definition)
    return config


def _check_online_run(definition: AgentDefinition, *, num_envs: int, inference: str, action_repeat: int) -> None:
    """ValueError, saying what would work, if `definition` cannot run online as asked: an offline agent (it needs
    a dataset), a multi-agent one with `num_envs` > 1 or `action_repeat` > 1, or central `inference` for an agent
    that declares no one policy to serve (`AgentDefinition.central_inference`)."""
    agent = definition.name
    if definition.offline:
        raise ValueError(
            f"{agent} learns offline, from a dataset: add --dataset ID (a local Minari dataset; "
            f"`python -m launch.cli.record` writes one), or choose an online agent: {', '.join(online_agents())}."
        )
    if definition.multiagent and num_envs > 1:
        raise ValueError(
            f"{agent} acts for several agents, in one environment per actor: use --num-envs 1 (there is no vector "
            f"form of the PettingZoo adapter); more environments at once: --actors N."
        )
    if definition.multiagent and action_repeat != 1:
        raise ValueError(
            f"{agent} acts for several agents, whose rewards arrive per agent, and ActionRepeatWrapper sums one "
            f"reward: use --action-repeat 1 (the default)."
        )
    if inference == "central" and not definition.central_inference:
        raise ValueError(
            f"{agent} runs one single-agent actor per agent, each starting and ending its own episodes, so there is "
            f"no one policy for an inference node to serve: use --inference local, or a parameter-shared agent "
            f"(ippo, mappo), whose one policy acts for every agent and serves every actor's agents in one batch."
        )


class _OnlineEnvironments(NamedTuple):
    """How an online run builds its environments, from `_online_environments`."""

    factory: Callable[[int], Any]  # seed -> one dm_env environment
    vector_factory: Optional[Callable[..., Any]]  # (num_envs=, seed=) -> a vector environment; gymnasium ids only
    threshold: Optional[float]  # gymnasium's reward_threshold, if the id has one


def _online_environments(environment: str, environment_factory: Optional[Callable[[int], Any]],
                         definition: AgentDefinition) -> _OnlineEnvironments:
    """The factories of the environment named `environment`: a PettingZoo MPE id (`mpe/...`), a Control Suite id
    (`dm_control/<domain>-<task>`) or a gymnasium id, each checked (a ValueError lists the ids that would do); or
    the user's own dm_env `environment_factory`, seen in 32 bits with a nest of state observations as one vector
    (`_native_environment`)."""
    if environment_factory is not None:
        # Native dm_env environments often speak float64/int64 and observe dicts; JAX agents want 32 bits and the
        # networks one array.
        return _OnlineEnvironments(functools.partial(_native_environment, environment_factory), None, None)
    if environment.startswith(MPE_PREFIX):
        check_pettingzoo_id(environment)  # a ValueError listing the multi-agent environments
        return _OnlineEnvironments(functools.partial(make_pettingzoo_environment, environment), None, None)
    if environment.startswith(CONTROL_SUITE_PREFIX):
        check_control_suite_id(environment)  # a ValueError listing the domains and their tasks
        return _OnlineEnvironments(functools.partial(make_control_suite_environment, environment), None, None)
    _check_environment_id(environment, definition)
    return _OnlineEnvironments(functools.partial(make_gymnasium_environment, environment),
                              functools.partial(make_vector_environment, environment),
                              environment_threshold(environment))


def _check_environment_id(environment: str, definition: AgentDefinition) -> None:
    """ValueError if `environment` is no registered gymnasium id, suggesting ids that fit `definition`
    (`unknown_environment_message`)."""
    try:
        check_gymnasium_id(environment)
    except ValueError:
        raise ValueError(unknown_environment_message(environment, definition)) from None


def make_offline_experiment_config(
    *,
    agent: str,
    dataset: str,
    environment: str,
    max_num_learner_steps: int,
    seed: int = 0,
    run_dir: Optional[str] = None,
    evaluation_every: int = OfflineExperimentConfig.evaluation_every,
    num_evaluation_episodes: int = OfflineExperimentConfig.num_evaluation_episodes,
    progress_period_s: float = OfflineExperimentConfig.progress_period_s,
    stop_at_average_return: Optional[float] = None,
    config_overrides: Sequence[str] = (),
    target_return: Optional[float] = None,
    return_window: int = OfflineExperimentConfig.return_window,
) -> OfflineExperimentConfig:
    """An OfflineExperimentConfig for a registered offline agent learning from the local Minari dataset `dataset`,
    evaluated on the gymnasium environment `environment`.

    The learner's batches are `MinariIterator`s over `dataset` (`batch_size * num_sgd_steps_per_step`
    transitions, discounted by the agent's `discount`); the agent config's `dataset_id` is `dataset`. The
    threshold is `target_return` if given, else gymnasium's `reward_threshold`. Before anything is built, an
    online agent, an unknown environment, networks that do not fit it and a dataset recorded on other spaces are
    ValueErrors (`DatasetSpaceError`) saying what would fit; a dataset that is not there is a FileNotFoundError
    naming where it was looked for.
    """
    definition = agent_definition(agent)
    _check_offline_run(definition, dataset=dataset, config_overrides=config_overrides)
    agent_config = make_agent_config(agent, [*config_overrides, f"dataset_id={dataset}"])
    _check_environment_id(environment, definition)
    config = OfflineExperimentConfig(
        builder=definition.make_builder(agent_config),
        environment_factory=functools.partial(make_gymnasium_environment, environment),
        network_factory=functools.partial(definition.make_networks, config=agent_config),
        dataset_factory=functools.partial(
            _minari_batches, dataset, agent_config.batch_size * agent_config.num_sgd_steps_per_step,
            agent_config.discount,
        ),
        dataset=dataset,
        max_num_learner_steps=max_num_learner_steps,
        seed=seed,
        evaluation_every=evaluation_every,
        num_evaluation_episodes=num_evaluation_episodes,
        run_dir=run_dir,
        agent=agent,
        environment=environment,
        progress_period_s=progress_period_s,
        target_return=target_return if target_return is not None else environment_threshold(environment),
        return_window=return_window,
        stop_at_average_return=stop_at_average_return,
    )
    check_agent_fits_environment(config, definition)
    check_dataset_fits(dataset, read_environment_spec(config))
    return config


def _check_offline_run(definition: AgentDefinition, *, dataset: str, config_overrides: Sequence[str]) -> None:
    """ValueError, saying what would work, if `definition` is an online agent, or if `config_overrides` name
    another dataset than `dataset` (the dataset is named by --dataset alone)."""
    if not definition.offline:
        raise ValueError(
            f"{definition.name} learns online, from its own actors: drop --dataset, or choose an offline agent: "
            f"{', '.join(offline_agents())}."
        )
    for assignment in config_overrides:
        field, value = parse_assignment(assignment)
        if field == "dataset_id" and value != dataset:
            raise ValueError(
                f"--config dataset_id={value} disagrees with the dataset {dataset!r} (--dataset): the dataset is "
                f"named by --dataset alone; drop the --config."
            )


def _minari_batches(dataset_id: str, batch_size: int, discount: float, seed: int) -> MinariIterator:
    """An `OfflineExperimentConfig.dataset_factory` once the first three are bound (picklable, unlike a closure)."""
    return MinariIterator(dataset_id, batch_size=batch_size, discount=discount, seed=seed)


def _native_environment(environment_factory: Callable[[int], Any], seed: int):
    """A dm_env environment of the user's as agents take it: in 32 bits (SinglePrecisionWrapper, which casts actions
    back to the environment's own dtypes), a nest of state observations as one vector (concatenate_state_nest)."""
    return concatenate_state_nest(SinglePrecisionWrapper(environment_factory(seed)))


def unknown_environment_message(name: str, definition: AgentDefinition) -> str:
    """Says `name` is unknown and suggests only environments whose spaces the agent's networks accept; a JAX
    environment's id, that only the fully jitted engine runs it."""
    if name.startswith(JAX_ENVIRONMENT_PREFIXES):
        return (f"{name!r} is an environment written in JAX, which only the fully jitted engine runs: add "
                f"--launch anakin (python -m launch --agent {definition.name} --env {name} --launch anakin). The "
                "other engines take gymnasium ids and dm_control/<domain>-<task> (docs/environments.md).")
    fitting = environments_that_fit(definition)
    message = f"Unknown gymnasium environment {name!r}."
    close = difflib.get_close_matches(name, fitting, n=3, cutoff=0.6)
    if close:
        message += " Did you mean: " + ", ".join(repr(c) for c in close) + "?"
    return message + (
        f" Environments that fit {definition.name} ({definition.action_space} actions) with gymnasium alone: "
        f"{', '.join(fitting) or 'none'}. Others need extra packages (see gymnasium.pprint_registry()); the "
        f"DeepMind Control Suite's tasks are {CONTROL_SUITE_PREFIX}<domain>-<task> (docs/environments.md)."
    )


def environments_that_fit(definition: AgentDefinition) -> List[str]:
    """The gymnasium environments (those needing no extra package) whose spaces `definition`'s networks accept,
    found by building each environment and the agent's networks for it; for a multi-agent agent, the `mpe/`
    environments."""
    config = definition.config_class()
    if definition.multiagent:
        return [MPE_PREFIX + name for name in MPE_ENVIRONMENTS
                if _builds(definition, config, functools.partial(make_pettingzoo_environment, MPE_PREFIX + name))]
    fitting = []
    with warnings.catch_warnings():  # deprecated versions warn when built; they are only probed here
        warnings.simplefilter("ignore")
        for env_id, env_spec in sorted(gymnasium.envs.registry.items()):
            if _fits(definition, config, env_id, env_spec):
                fitting.append(env_id)
    return fitting


def _fits(definition: AgentDefinition, config, env_id: str, env_spec) -> bool:
    entry_point = env_spec.entry_point
    if not (isinstance(entry_point, str) and entry_point.startswith(NO_EXTRA_DEPENDENCY_MODULES)):
        return False
    return _builds(definition, config, functools.partial(make_gymnasium_environment, env_id))


def _builds(definition: AgentDefinition, config, environment_factory: Callable[[int], Any]) -> bool:
    try:
        environment = environment_factory(seed=0)
        spec = make_environment_spec(environment)
        environment.close()
        definition.make_networks(spec, config)
    except Exception:  # noqa: BLE001 - does not fit (or cannot be built here): not suggested
        return False
    return True


def check_agent_fits_environment(
    config: Union[ExperimentConfig, OfflineExperimentConfig], definition: AgentDefinition
) -> None:
    """Builds the networks once for the environment's spec; a mismatch is a ValueError that also names the
    registered agents whose action space fits the environment."""
    spec = read_environment_spec(config)
    try:
        config.network_factory(spec)
    except ValueError as error:
        multiagent = is_multiagent_spec(spec)
        actions = next(iter(spec.actions.values())) if multiagent else spec.actions
        kind = "discrete" if isinstance(actions, specs.DiscreteArray) else "continuous"
        fitting = agents_for_action_space(kind, multiagent=multiagent)
        what = f"{kind} actions of multi-agent environments" if multiagent else f"{kind} actions"
        raise ValueError(f"{error} Agents for {what}: {', '.join(fitting) or 'none registered'}.") from None
