"""VariableClient: how an actor keeps its copy of the learner's parameters fresh."""

from typing import Any, Optional, Sequence, Union

import jax

from acmelike import core


class VariableClient:
    """Pulls named variables from a `VariableSource` every `update_period` calls to `update()`.

        client = VariableClient(learner, "policy", update_period=100)
        client.update()          # fetches on every 100th call
        client.update(wait=True) # fetches now
        client.params            # the last fetched value (fetched on first use)

    Fetched values are put on the default device once here, so a jitted policy does not transfer them per step.
    """

    def __init__(self, source: core.VariableSource, names: Union[str, Sequence[str]], update_period: int = 1):
        if update_period < 1:
            raise ValueError(f"update_period must be >= 1, got {update_period}.")
        self._source = source
        self._single = isinstance(names, str)
        self._names = [names] if self._single else list(names)
        self._update_period = update_period
        self._calls_since_fetch = 0
        self._params: Optional[Any] = None
        self.num_fetches = 0

    def update(self, wait: bool = False) -> None:
        self._calls_since_fetch += 1
        if wait or self._calls_since_fetch >= self._update_period:
            self.update_and_wait()

    def update_and_wait(self) -> None:
        values = self._source.get_variables(self._names)
        values = jax.device_put(values)
        self._params = values[0] if self._single else values
        self._calls_since_fetch = 0
        self.num_fetches += 1

    @property
    def params(self) -> Any:
        if self._params is None:
            self.update_and_wait()
        return self._params
