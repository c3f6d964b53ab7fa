"""The Adder protocol: what an actor calls to hand its experience to replay."""

from typing import Protocol, runtime_checkable

import dm_env

from acmelike.types import NestedArray


@runtime_checkable
class Adder(Protocol):
    """Receives an episode step by step.

        adder.add_first(timestep)                    # timestep.first()
        adder.add(action, next_timestep, extras)     # until next_timestep.last()
    """

    def add_first(self, timestep: dm_env.TimeStep) -> None:
        """Starts an episode with its first timestep."""

    def add(self, action: NestedArray, next_timestep: dm_env.TimeStep, extras: NestedArray = ()) -> None:
        """Records `action` (with actor `extras`, e.g. log-probabilities) and the timestep it led to."""

    def reset(self) -> None:
        """Drops any partial episode (e.g. after an actor restarts)."""
