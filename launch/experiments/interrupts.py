"""StopRequests: Ctrl-C and SIGTERM as a request to end a run cleanly, not as a traceback.

    with StopRequests() as stop:
        while not stop.requested and ...:
            run_one_episode()
    summary["interrupted"] = stop.requested        # and exit with stop.exit_code

The first SIGINT or SIGTERM only records the request; the run ends at its next episode boundary, writes its logs,
summary and learning curve, and the command line exits 130 (SIGINT) or 143 (SIGTERM), so a script never mistakes
an interrupted run for a finished one. A second signal raises KeyboardInterrupt at once, for a run that does not
reach an episode boundary. Handlers are installed only in the main thread (elsewhere signals cannot be caught),
and the previous handlers are restored on exit. Handlers that chain to ours (Launchpad's dispatcher keeps the
handler it replaced) see the same request.
"""

import signal
import threading
from typing import Optional

_SIGNALS = (signal.SIGINT, signal.SIGTERM)


class StopRequests:
    def __init__(self):
        self.signal_number: Optional[int] = None
        self._previous = {}

    @property
    def requested(self) -> bool:
        return self.signal_number is not None

    @property
    def signal_name(self) -> Optional[str]:
        return None if self.signal_number is None else signal.Signals(self.signal_number).name

    @property
    def exit_code(self) -> int:
        """0 when no signal came; else 128 + the signal's number (130 for SIGINT, 143 for SIGTERM)."""
        return 0 if self.signal_number is None else 128 + self.signal_number

    def _handle(self, signal_number, frame):
        if self.signal_number is not None:
            raise KeyboardInterrupt(f"second {signal.Signals(signal_number).name}: stopping at once")
        self.signal_number = signal_number

    def __enter__(self) -> "StopRequests":
        if threading.current_thread() is threading.main_thread():
            for number in _SIGNALS:
                self._previous[number] = signal.signal(number, self._handle)
        return self

    def __exit__(self, *exc) -> None:
        for number, handler in self._previous.items():
            signal.signal(number, handler)
        self._previous.clear()
