"""VariableClient: how an actor keeps its copy of the learner's parameters fresh."""

import concurrent.futures
import threading
from typing import Any, Optional, Sequence, Union

import jax

from acmelike import core


class RemoteVariableSource(core.VariableSource):
    """A variable source in another thread or process (e.g. a Launchpad courier client of the learner).

    Wrapping a source in this tells `VariableClient` to fetch from it asynchronously.
    """

    def __init__(self, source: core.VariableSource):
        self._source = source

    def get_variables(self, names):
        return self._source.get_variables(names)


class StaticVariableSource(core.VariableSource):
    """Serves fixed values by name, e.g. trained parameters to an evaluation actor with no learner behind it.

        actor = builder.make_actor(..., variable_source=StaticVariableSource({"policy": params}))
    """

    def __init__(self, variables: dict):
        self._variables = dict(variables)

    def get_variables(self, names):
        unknown = [name for name in names if name not in self._variables]
        if unknown:
            raise KeyError(f"StaticVariableSource serves {sorted(self._variables)}; unknown: {unknown}.")
        return [self._variables[name] for name in names]


class VariableClient:
    """Pulls named variables from a `VariableSource` every `update_period` calls to `update()`.

        client = VariableClient(learner, "policy", update_period=100)
        client.update()          # fetches on every 100th call
        client.update(wait=True) # fetches now
        client.params            # the last fetched value (fetched on first use)

    With `asynchronous=True` (for a learner in another process) a due fetch runs on a background thread and its
    result replaces the parameters at a later `update()`, so acting never waits on the network; at most one
    fetch is in flight. The default (None) is asynchronous exactly for a `RemoteVariableSource`, so builders
    need not know where their learner runs. Fetched values are put on the default device once here, so a jitted policy does not
    transfer them on every step.
    """

    def __init__(
        self,
        source: core.VariableSource,
        names: Union[str, Sequence[str]],
        update_period: int = 1,
        asynchronous: Optional[bool] = None,
    ):
        if update_period < 1:
            raise ValueError(f"update_period must be >= 1, got {update_period}.")
        self._source = source
        self._single = isinstance(names, str)
        self._names = [names] if self._single else list(names)
        self._update_period = update_period
        self._calls_since_fetch = 0
        self._params: Optional[Any] = None
        if asynchronous is None:
            asynchronous = isinstance(source, RemoteVariableSource)
        self._asynchronous = asynchronous
        self._pending: Optional[concurrent.futures.Future] = None
        self.num_fetches = 0

    def update(self, wait: bool = False) -> None:
        if self._pending is not None and self._pending.done():
            self._adopt(self._pending.result())  # re-raises a failed fetch here, in the caller's thread
            self._pending = None
        self._calls_since_fetch += 1
        if wait:
            self.update_and_wait()
        elif self._calls_since_fetch >= self._update_period:
            if not self._asynchronous:
                self.update_and_wait()
            elif self._pending is None:
                self._pending = self._fetch_in_background()
                self._calls_since_fetch = 0

    def update_and_wait(self) -> None:
        self._adopt(self._fetch())

    def _fetch_in_background(self) -> concurrent.futures.Future:
        # A daemon thread, not a ThreadPoolExecutor: the interpreter joins executor threads at exit, and a fetch
        # from a learner that has gone away may never return.
        future: concurrent.futures.Future = concurrent.futures.Future()

        def fetch():
            try:
                future.set_result(self._fetch())
            except BaseException as error:  # noqa: BLE001 - re-raised by update() in the actor's thread
                future.set_exception(error)

        threading.Thread(target=fetch, name="variable-client-fetch", daemon=True).start()
        return future

    def _fetch(self):
        values = self._source.get_variables(self._names)
        # A learner in this process serves arrays that already live on the device: putting them there again
        # costs a call per leaf at every fetch (450 us of a PPO step with one environment, fetching every step).
        if all(isinstance(leaf, jax.Array) for leaf in jax.tree_util.tree_leaves(values)):
            return values
        return jax.device_put(values)

    def _adopt(self, values) -> None:
        self._params = values[0] if self._single else values
        self._calls_since_fetch = 0
        self.num_fetches += 1

    @property
    def params(self) -> Any:
        if self._params is None:
            self.update_and_wait()
        return self._params
