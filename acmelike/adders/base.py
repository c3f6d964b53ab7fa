"""The Adder interface: what an actor calls to hand its experience to replay."""

import abc

import dm_env

from acmelike.types import NestedArray


class Adder(abc.ABC):
    """Receives an episode step by step.

        adder.add_first(timestep)                    # timestep.first()
        adder.add(action, next_timestep, extras)     # until next_timestep.last()
        adder.close()                                # when the actor is done with it

    `extras` describe the actor state that *chose* `action` (e.g. its log-probability, or the recurrent state
    before the step), never the state after it.
    """

    @abc.abstractmethod
    def add_first(self, timestep: dm_env.TimeStep) -> None:
        """Starts an episode with its first timestep."""

    @abc.abstractmethod
    def add(self, action: NestedArray, next_timestep: dm_env.TimeStep, extras: NestedArray = ()) -> None:
        """Records `action` (with actor `extras`, e.g. log-probabilities) and the timestep it led to."""

    @abc.abstractmethod
    def reset(self) -> None:
        """Drops any partial episode (e.g. after an actor restarts)."""

    @abc.abstractmethod
    def close(self) -> None:
        """Flushes what can be written and releases the connection to replay. The adder is unusable after."""

    @abc.abstractmethod
    def interrupt(self) -> None:
        """Makes a write that is waiting on replay (e.g. held back by a rate limiter) give up promptly.

        Called from another thread when a program stops; an adder that never waits may do nothing.
        """
