"""The engine a program's nodes run under (Launchpad or Ray): the stop signal and how a node ends the program.

Node bodies (`launch.engines.distributed.nodes`) never name an engine. They ask this module:

    stop = runtime.stop_event()      # a threading.Event, set once the program is stopping
    while not stop.is_set():
        ...work...
    runtime.stop_program()           # this node ends the program (after writing why; see nodes.end_program)

Launchpad is the default engine. Another engine's node host calls `install(...)` in its process before it builds a
node, so each node process sees the engine it was launched by. Handles to other nodes are the engine's own
clients; every engine's client offers `client.method(...)` and `client.futures.method(...)` (a
`concurrent.futures.Future`), as Launchpad's courier clients do.
"""

import threading
from typing import Callable, Optional


class Runtime:
    """What a node needs from its engine: the program's stop event, and a way to stop the whole program."""

    def __init__(self, stop_event: Callable[[], threading.Event], stop_program: Callable[[], None], name: str):
        self._stop_event = stop_event
        self._stop_program = stop_program
        self.name = name

    def stop_event(self) -> threading.Event:
        return self._stop_event()

    def stop_program(self) -> None:
        self._stop_program()


def _launchpad_stop_event() -> threading.Event:
    import launchpad as lp

    return lp.stop_event()


def _launchpad_stop() -> None:
    import launchpad as lp

    lp.stop()


LAUNCHPAD = Runtime(_launchpad_stop_event, _launchpad_stop, "launchpad")
_installed: Optional[Runtime] = None


def install(runtime: Optional[Runtime]) -> None:
    """Makes `runtime` the engine of the nodes built in this process from now on (None: back to Launchpad)."""
    global _installed
    _installed = runtime


def current() -> Runtime:
    return _installed or LAUNCHPAD


def stop_event() -> threading.Event:
    """The program's stop event, as the current engine keeps it."""
    return current().stop_event()


def stop_program() -> None:
    """Asks the current engine to stop every node of the program."""
    current().stop_program()
