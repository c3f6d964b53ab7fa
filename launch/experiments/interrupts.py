"""StopRequests: Ctrl-C and SIGTERM as a request to end a run cleanly, not as a traceback.

    with StopRequests() as stop:
        while not stop.requested and ...:
            run_one_episode()
    summary["interrupted"] = stop.requested        # and exit with stop.exit_code

The first SIGINT or SIGTERM only records the request; the run ends at its next episode boundary, writes its logs,
summary and learning curve, and the command line exits 130 (SIGINT) or 143 (SIGTERM), so a script never mistakes
an interrupted run for a finished one. A second signal raises KeyboardInterrupt at once, for a run that does not
reach an episode boundary. Handlers are installed only in the main thread (elsewhere signals cannot be caught),
and the previous handlers are restored on exit.

A distributed launcher enters it with `hold_back=True` after its engine has installed its own handlers (Launchpad's
stop every node at once): the first signal is then recorded and held back from them until `release()`, so the
launcher can checkpoint the run while every node is still up, and only then let the engine stop the nodes:

    with StopRequests(hold_back=True, passes=program_ended_itself) as stop:
        while running:
            if stop.held:
                checkpoint_the_run()
                stop.release()              # the engine's handlers now see the signal and stop every node

A second signal, or one `passes(signal_number)` says the program sent itself (Launchpad's `lp.stop()` is a SIGTERM
to the launcher), goes on to the engine's handlers at once.
"""

import signal
import threading
from typing import Callable, Optional

_SIGNALS = (signal.SIGINT, signal.SIGTERM)


class StopRequests:
    def __init__(self, *, hold_back: bool = False, passes: Callable[[int], bool] = lambda signal_number: False):
        self.signal_number: Optional[int] = None
        self._hold_back = hold_back
        self._passes = passes
        self._released = False
        self._previous = {}

    @property
    def requested(self) -> bool:
        return self.signal_number is not None

    @property
    def held(self) -> bool:
        """Whether a signal is being held back from the handlers this one replaced (see `release`)."""
        return self._hold_back and self.requested and not self._released

    @property
    def signal_name(self) -> Optional[str]:
        return None if self.signal_number is None else signal.Signals(self.signal_number).name

    @property
    def exit_code(self) -> int:
        """0 when no signal came; else 128 + the signal's number (130 for SIGINT, 143 for SIGTERM)."""
        return 0 if self.signal_number is None else 128 + self.signal_number

    def release(self) -> None:
        """Passes the held signal on to the handler it was held back from (once)."""
        if self.held:
            self._pass_on(self.signal_number, None)

    def _pass_on(self, signal_number: int, frame) -> None:
        self._released = True
        previous = self._previous.get(signal_number)
        if callable(previous):
            previous(signal_number, frame)

    def _handle(self, signal_number, frame):
        first = self.signal_number is None
        if first:
            self.signal_number = signal_number
        if self._hold_back:
            if not first or self._passes(signal_number):
                self._pass_on(signal_number, frame)
        elif not first:
            raise KeyboardInterrupt(f"second {signal.Signals(signal_number).name}: stopping at once")

    def __enter__(self) -> "StopRequests":
        if threading.current_thread() is threading.main_thread():
            for number in _SIGNALS:
                self._previous[number] = signal.signal(number, self._handle)
        return self

    def __exit__(self, *exc) -> None:
        for number, handler in self._previous.items():
            signal.signal(number, handler)
        self._previous.clear()
