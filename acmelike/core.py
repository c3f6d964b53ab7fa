"""The core interfaces of acmelike: actors act, learners learn, variable sources serve parameters.

The whole agent-environment loop, which `environment_loops.EnvironmentLoop` runs:

    timestep = environment.reset()
    actor.observe_first(timestep)            # the actor core's episode hook runs here
    while not timestep.last():
        action = actor.select_action(timestep.observation)
        timestep = environment.step(action)
        actor.observe(action, next_timestep=timestep)
        actor.update()

and elsewhere (the same thread, or another process) `learner.step()` in a loop.

Every interface is an abstract base class: a subclass that forgets a method cannot be instantiated, so the
mistake shows when the object is built, not as a silent `None` later.
"""

import abc
from typing import Any, Optional, Sequence

import dm_env

from acmelike.types import NestedArray


class Actor(abc.ABC):
    """Chooses actions and passes what it sees to an adder."""

    @abc.abstractmethod
    def select_action(self, observation: NestedArray) -> NestedArray:
        """Samples an action for one (unbatched) observation."""

    @abc.abstractmethod
    def observe_first(self, timestep: dm_env.TimeStep) -> None:
        """Observes the first timestep of an episode."""

    @abc.abstractmethod
    def observe(self, action: NestedArray, next_timestep: dm_env.TimeStep) -> None:
        """Observes the action taken and the timestep it led to."""

    @abc.abstractmethod
    def update(self, wait: bool = False) -> None:
        """Refreshes parameters from the variable source (`wait` forces it now)."""


class VariableSource(abc.ABC):
    """Serves named variables (e.g. network parameters)."""

    @abc.abstractmethod
    def get_variables(self, names: Sequence[str]) -> list:
        """Returns one pytree per name, in order."""


class Saveable(abc.ABC):
    """Something whose state can be checkpointed and restored."""

    @abc.abstractmethod
    def save(self) -> Any:
        """Returns the state to checkpoint (a pytree of arrays and numbers)."""

    @abc.abstractmethod
    def restore(self, state: Any) -> None:
        """Restores from what `save` returned."""


class Learner(VariableSource):
    """Updates parameters from data. `step` does one learning step (which may hold several SGD steps)."""

    @abc.abstractmethod
    def step(self) -> None:
        """Takes one learning step: pulls a batch, updates parameters."""

    def log_every_step(self) -> None:
        """Asks for the metrics of every step rather than time-throttled logs, so that two runs that train alike also
        log alike (what a reproducible run asks). A learner that logs nothing, or nothing by time, ignores it."""

    def state_steps(self) -> Optional[int]:
        """The SGD steps its training state has counted; None where the state holds no one such count (independent
        learners hold one per policy). A resumed run records it beside the restored counts (`resumed.json`): the
        state restored is then seen to be the one those counts were saved with."""
        return None


class Worker(abc.ABC):
    """Something that runs until it is told, or decides, to stop: every node of a distributed program."""

    @abc.abstractmethod
    def run(self) -> None:
        """Runs until the program stops (or the worker's own end condition)."""
