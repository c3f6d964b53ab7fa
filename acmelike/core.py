"""The core interfaces of acmelike: actors act, learners learn, variable sources serve parameters.

The whole agent-environment loop, which `environment_loops.EnvironmentLoop` runs:

    timestep = environment.reset()
    actor.observe_first(timestep)
    while not timestep.last():
        action = actor.select_action(timestep.observation)
        timestep = environment.step(action)
        actor.observe(action, next_timestep=timestep)
        actor.update()

and elsewhere (the same thread, or another process) `learner.step()` in a loop.
"""

from typing import Any, Protocol, Sequence, runtime_checkable

import dm_env

from acmelike.types import NestedArray


@runtime_checkable
class Actor(Protocol):
    """Chooses actions and passes what it sees to an adder."""

    def select_action(self, observation: NestedArray) -> NestedArray:
        """Samples an action for one (unbatched) observation."""

    def observe_first(self, timestep: dm_env.TimeStep) -> None:
        """Observes the first timestep of an episode."""

    def observe(self, action: NestedArray, next_timestep: dm_env.TimeStep) -> None:
        """Observes the action taken and the timestep it led to."""

    def update(self, wait: bool = False) -> None:
        """Refreshes parameters from the variable source (`wait` forces it now)."""


@runtime_checkable
class VariableSource(Protocol):
    """Serves named variables (e.g. network parameters)."""

    def get_variables(self, names: Sequence[str]) -> list:
        """Returns one pytree per name, in order."""


@runtime_checkable
class Saveable(Protocol):
    def save(self) -> Any:
        """Returns the state to checkpoint."""

    def restore(self, state: Any) -> None:
        """Restores from what `save` returned."""


@runtime_checkable
class Learner(VariableSource, Protocol):
    """Updates parameters from data. `step` does one learning step (which may hold several SGD steps)."""

    def step(self) -> None:
        ...


@runtime_checkable
class Worker(Protocol):
    """Something that runs until it is told, or decides, to stop."""

    def run(self) -> None:
        ...
