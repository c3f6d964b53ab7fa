"""Snapshots: a trained evaluation policy on disk, loadable into an actor with no learner, replay or Launchpad.

    snapshot = load_snapshot("runs/dqn", resolve_agent=definitions.get)   # name -> AgentDefinition
    actor = snapshot.make_actor()

(`launch.load_actor("runs/dqn")` does this with the project's registry.) A run directory, its snapshots/ folder
or one snapshot can be named. A snapshot holds the evaluation policy's parameters and what rebuilding its networks
needs: the agent's name, its resolved config and the environment spec. The name is resolved to an
`acmelike.builders.AgentDefinition` when loading, by the caller's registry, so moving an agent's code never breaks
old snapshots. Snapshots
are written like checkpoints (`acmelike.checkpointing`: `<step>.tmp/` renamed when complete) under
`<run_dir>/snapshots/<step>/`, the newest kept:

    snapshots/000000050000/
        arrays/          orbax: {"params": the policy's parameters}
        metadata.json    agent, environment, action_repeat, step, config, environment_spec
"""

import dataclasses
import os
from typing import Any, Callable, Mapping, Optional

import numpy as np
from dm_env import specs

from acmelike import core
from acmelike.checkpointing import ARRAYS, CheckpointError, Checkpointer, latest_checkpoint, read_metadata
from acmelike.specs import EnvironmentSpec
from acmelike.wrappers.action_repeat import is_repeat_count
from acmelike.wrappers.pettingzoo_adapter import AgentObservation

SNAPSHOTS = "snapshots"


# Environment specs <-> JSON.

# The named tuples a spec may hold, by name: a multi-agent observation spec is a dict of AgentObservations.
NAMED_SPEC_TUPLES = {"AgentObservation": AgentObservation}


def spec_to_json(spec: Any) -> Any:
    """A (nest of) dm_env spec(s) as JSON data: dicts, lists, tuples and the named tuples of `NAMED_SPEC_TUPLES`
    are kept as nests."""
    if isinstance(spec, dict):
        return {"nest": "dict", "items": {key: spec_to_json(value) for key, value in spec.items()}}
    if isinstance(spec, tuple) and hasattr(spec, "_fields"):
        name = type(spec).__name__
        if NAMED_SPEC_TUPLES.get(name) is not type(spec):
            raise ValueError(f"A spec holds the named tuple {name}, which snapshots cannot read back: add it to "
                             "acmelike.snapshots.NAMED_SPEC_TUPLES.")
        return {"nest": "namedtuple", "type": name, "items": [spec_to_json(value) for value in spec]}
    if isinstance(spec, (list, tuple)):
        return {"nest": "list", "items": [spec_to_json(value) for value in spec]}
    data = {"shape": list(spec.shape), "dtype": np.dtype(spec.dtype).str, "name": spec.name}
    if isinstance(spec, specs.DiscreteArray):
        return {"kind": "discrete", "num_values": int(spec.num_values), **data}
    if isinstance(spec, specs.BoundedArray):
        return {"kind": "bounded", "minimum": np.asarray(spec.minimum).tolist(),
                "maximum": np.asarray(spec.maximum).tolist(), **data}
    return {"kind": "array", **data}


def spec_from_json(data: Any) -> Any:
    """Inverse of `spec_to_json`."""
    if "nest" in data:
        if data["nest"] == "dict":
            return {key: spec_from_json(value) for key, value in data["items"].items()}
        if data["nest"] == "namedtuple":
            if data["type"] not in NAMED_SPEC_TUPLES:
                raise ValueError(f"The spec holds a named tuple {data['type']!r} this code does not know; known: "
                                 f"{', '.join(NAMED_SPEC_TUPLES)}.")
            return NAMED_SPEC_TUPLES[data["type"]](*(spec_from_json(value) for value in data["items"]))
        return tuple(spec_from_json(value) for value in data["items"])
    shape, dtype, name = tuple(data["shape"]), np.dtype(data["dtype"]), data.get("name")
    if data["kind"] == "discrete":
        return specs.DiscreteArray(num_values=data["num_values"], dtype=dtype, name=name)
    if data["kind"] == "bounded":
        return specs.BoundedArray(shape, dtype, np.asarray(data["minimum"], dtype), np.asarray(data["maximum"], dtype),
                                  name=name)
    return specs.Array(shape, dtype, name=name)


def environment_spec_to_json(spec: EnvironmentSpec) -> dict:
    return {field: spec_to_json(getattr(spec, field)) for field in EnvironmentSpec._fields}


def environment_spec_from_json(data: Mapping[str, Any]) -> EnvironmentSpec:
    return EnvironmentSpec(**{field: spec_from_json(data[field]) for field in EnvironmentSpec._fields})


def config_from_json(config_class: type, data: Mapping[str, Any]) -> Any:
    """The frozen config dataclass from `dataclasses.asdict` output read back from JSON (lists back to tuples)."""
    names = {field.name for field in dataclasses.fields(config_class)}
    unknown = sorted(set(data) - names)
    if unknown:
        raise ValueError(f"{config_class.__name__} has no field(s) {unknown}; the file was written by other code.")
    return config_class(**{key: tuple(value) if isinstance(value, list) else value for key, value in data.items()})


# Saving.

class _Parameters(core.Saveable, core.VariableSource):
    """Fixed parameters: what a snapshot saves, and the variable source of the actor it loads into."""

    def __init__(self, params: Any):
        self.params = params

    def save(self) -> Any:
        return self.params

    def restore(self, state: Any) -> None:
        self.params = state

    def get_variables(self, names):
        return [self.params for _ in names]


def save_snapshot(
    run_dir: str,
    *,
    step: int,
    params: Any,
    agent: str,
    config: Any,
    environment_spec: EnvironmentSpec,
    environment: Optional[str] = None,
    action_repeat: int = 1,
) -> str:
    """Writes `<run_dir>/snapshots/<step>/` atomically (keeping only the newest) and returns its path.

    Args:
      params: the evaluation policy's parameters (what the learner serves as "policy"), a pytree of dicts/arrays.
      agent: the agent's registry name (e.g. "dqn"), which the loader resolves to its `AgentDefinition`.
      config: the agent's frozen config dataclass (network sizes come from it).
      environment_spec: the spec its networks were built for.
      environment: the environment's id (e.g. "CartPole-v1"), so `launch.cli.evaluate` can rebuild it.
      action_repeat: environment steps each of the policy's actions was held for in training
        (`acmelike.wrappers.ActionRepeatWrapper`; 1: none), which evaluating it should repeat.
    """
    metadata = {
        "agent": agent,
        "environment": environment,
        "action_repeat": action_repeat,
        "config": dataclasses.asdict(config),
        "environment_spec": environment_spec_to_json(environment_spec),
    }
    writer = Checkpointer(os.path.join(run_dir, SNAPSHOTS), {"params": _Parameters(params)}, metadata=metadata,
                          max_to_keep=1)
    return writer.save(step)


# Loading.

@dataclasses.dataclass(frozen=True)
class Snapshot:
    """A loaded snapshot; `make_actor()` turns it into an acting policy."""

    path: str
    step: int
    agent: str
    definition: Any  # the agent's `acmelike.builders.AgentDefinition`
    environment: Optional[str]
    config: Any
    environment_spec: EnvironmentSpec
    params: Any
    action_repeat: int = 1  # snapshots written before it was recorded held no repeat

    def make_actor(self, seed: int = 0, evaluation: bool = True) -> core.Actor:
        """An actor running the agent's evaluation policy (`evaluation=False`: its training policy) with these
        parameters; it writes to no adder."""
        import jax

        definition = self.definition
        builder = definition.make_builder(self.config)
        networks = definition.make_networks(self.environment_spec, self.config)
        policy = builder.make_policy(networks=networks, environment_spec=self.environment_spec, evaluation=evaluation)
        return builder.make_actor(random_key=jax.random.PRNGKey(seed), policy=policy,
                                  environment_spec=self.environment_spec, variable_source=_Parameters(self.params))


def find_snapshot(path: str) -> str:
    """The snapshot `path` names: a snapshot itself, a `snapshots/` folder (its newest) or a run directory."""
    if not os.path.exists(path):
        raise CheckpointError(f"Snapshot path {path} does not exist.")
    if os.path.exists(os.path.join(path, "metadata.json")):
        return path
    for directory in (path, os.path.join(path, SNAPSHOTS)):
        latest = latest_checkpoint(directory, explain=True)
        if latest is not None:
            return latest
    raise CheckpointError(
        f"No snapshot in {path}: expected {os.path.join(path, SNAPSHOTS, '<step>')}/metadata.json. Snapshots are "
        "written with every checkpoint and at the end of a run."
    )


def load_snapshot(path: str, *, resolve_agent: Callable[[str], Any]) -> Snapshot:
    """Reads the snapshot at `path` (see `find_snapshot`); CheckpointError naming the file if it is unusable.

    `resolve_agent` maps the agent's name to its `AgentDefinition` (ValueError or KeyError when unknown).
    """
    import orbax.checkpoint as ocp

    path = find_snapshot(path)
    metadata = read_metadata(path)
    try:
        definition = resolve_agent(metadata["agent"])
        config = config_from_json(definition.config_class, metadata["config"])
        spec = environment_spec_from_json(metadata["environment_spec"])
        action_repeat = metadata.get("action_repeat", 1)
        if not is_repeat_count(action_repeat):
            raise ValueError(f"action_repeat must be an int >= 1, got {action_repeat!r}")
    except (KeyError, ValueError, TypeError, ImportError, AttributeError) as error:
        raise CheckpointError(
            f"Snapshot metadata {os.path.join(path, 'metadata.json')} is unusable ({type(error).__name__}: {error})."
        ) from error
    arrays = os.path.abspath(os.path.join(path, ARRAYS))  # orbax accepts absolute paths only
    try:
        # Parameters are dicts of arrays (flax), so they need no target structure to be read back exactly.
        params = ocp.Checkpointer(ocp.StandardCheckpointHandler()).restore(arrays)["params"]
    except Exception as error:  # orbax raises many types (FileNotFoundError, ValueError, tensorstore errors)
        raise CheckpointError(
            f"Could not read the parameters of snapshot {arrays} ({type(error).__name__}: {error})."
        ) from error
    return Snapshot(path=path, step=int(metadata.get("step", 0)), agent=metadata["agent"], definition=definition,
                    environment=metadata.get("environment"), config=config, environment_spec=spec, params=params,
                    action_repeat=action_repeat)
