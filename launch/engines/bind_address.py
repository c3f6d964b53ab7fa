"""Where a run's servers listen: 127.0.0.1, unless the user names another address (`--bind-address`).

Reverb and Launchpad's courier build their gRPC listening address in C++ as "[::]:PORT" (every interface) and no
option chooses it; both serve whoever reaches the port (courier unpickles its calls' arguments; a Reverb client
reads, inserts, resets and checkpoints the replay). So every process of a run that may start a server loads a
small library, `bind_address.c`, through LD_PRELOAD: a bind to the wildcard address becomes a bind to
`$ACMELIKE_BIND_ADDRESS`. Servers that choose their own address (Ray's, bound to its node address) keep it.

    python -m launch ...            # launch/__init__.py calls exec_preloaded(): the process restarts once, loaded
    listen_on("127.0.0.1", here=True)   # a runner, before it starts servers here (here=True) or in child processes

Child processes (Launchpad's local_mp nodes, a local Ray's daemons and workers) inherit both environment variables
set by `listen_on`. A Python program that calls the runners itself runs its in-process servers (single-process
Reverb, local_mt nodes) unfenced, with a warning, unless it is started with the library loaded:

    LD_PRELOAD=$(python -m launch.engines.bind_address) python my_program.py

The library is compiled once per source version by the C compiler (`$CC`, else `cc`) into
`$XDG_CACHE_HOME/acmelike/` (else `~/.cache/acmelike/`). Where it cannot be built, a run that would start servers
is refused (`BindAddressError`), unless it is told to listen on every interface (`--bind-address 0.0.0.0`).
"""

import hashlib
import ipaddress
import os
import subprocess
import sys
import tempfile
import warnings
from typing import Optional

ENVIRONMENT_VARIABLE = "ACMELIKE_BIND_ADDRESS"  # read by bind_address.c at every bind
DEFAULT = "127.0.0.1"
EVERY_INTERFACE = "0.0.0.0"
_SOURCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "bind_address.c")
_LIBRARY_PREFIX = "acmelike-bind-address-"
_RESTARTED = "ACMELIKE_BIND_ADDRESS_RESTARTED"  # set across exec_preloaded's restart: it never loops


class BindAddressError(RuntimeError):
    """The library that fences a run's servers to its bind address cannot be built or loaded."""


def check_address(address: str) -> str:
    """`address` if it is an IPv4 address in dotted form; ValueError naming it otherwise."""
    try:
        return str(ipaddress.IPv4Address(address))
    except ValueError:
        raise ValueError(
            f"--bind-address {address!r} is not an IPv4 address: give one of this machine's addresses, e.g. "
            f"127.0.0.1 (the default: this machine only), 10.0.0.5 (one network), or 0.0.0.0 (every interface)."
        ) from None


def library() -> str:
    """The path of the compiled `bind_address.c`, built first if this version of it is not built yet."""
    with open(_SOURCE, "rb") as f:
        source = f.read()
    cache_home = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    directory = os.path.join(cache_home, "acmelike")
    path = os.path.join(directory, f"{_LIBRARY_PREFIX}{hashlib.sha256(source).hexdigest()[:16]}.so")
    if os.path.exists(path):
        return path
    compiler = os.environ.get("CC") or "cc"
    try:
        os.makedirs(directory, exist_ok=True)
        handle, building = tempfile.mkstemp(suffix=".so", dir=directory)
        os.close(handle)
        try:
            result = subprocess.run([compiler, "-shared", "-fPIC", "-O2", "-o", building, _SOURCE, "-ldl"],
                                    capture_output=True, text=True)
            if result.returncode != 0:
                raise OSError(f"{compiler} exited with {result.returncode}: {result.stderr.strip()[-500:]}")
            os.replace(building, path)  # whole, or not at all: another process may be building it too
        finally:
            if os.path.exists(building):
                os.remove(building)
    except OSError as error:
        raise BindAddressError(
            f"cannot build {_SOURCE} into {directory} ({error}), the library that keeps a run's servers on its "
            f"--bind-address (default {DEFAULT}): install a C compiler (e.g. apt-get install gcc; or set CC), or "
            f"pass --bind-address {EVERY_INTERFACE} to let every server listen on every interface."
        ) from None
    return path


def loaded() -> bool:
    """Whether the library is loaded in this process (started with it in LD_PRELOAD)."""
    try:
        with open("/proc/self/maps") as f:
            return _LIBRARY_PREFIX in f.read()
    except OSError:
        return False


def exec_preloaded() -> None:
    """Restarts this process with the library preloaded, unless it is loaded already. `python -m launch` calls
    this before it imports anything else, so the run's own process binds its servers like every other. Where the
    library cannot be built, returns: a run that needs it is refused later (`listen_on`), with what to do."""
    if loaded() or os.environ.get(_RESTARTED):
        return
    try:
        path = library()
    except BindAddressError:
        return
    environment = dict(os.environ, LD_PRELOAD=_preload_with(path), **{_RESTARTED: "1"})
    sys.stdout.flush()
    sys.stderr.flush()
    os.execve(sys.executable, [sys.executable] + sys.orig_argv[1:], environment)


def _preload_with(path: str) -> str:
    others = [entry for entry in os.environ.get("LD_PRELOAD", "").replace(":", " ").split() if entry != path]
    return " ".join([path] + others)


def resolve(address: Optional[str]) -> str:
    """`address` checked, or `DEFAULT` for None."""
    return check_address(DEFAULT if address is None else address)


def check_can_listen(address: Optional[str]) -> None:
    """Raises what `listen_on` would (ValueError for a bad address, BindAddressError without the library), without
    changing anything but the library's cache."""
    if resolve(address) != EVERY_INTERFACE:
        library()


_warned = False


def listen_on(address: Optional[str], *, here: bool) -> str:
    """Makes the servers started from now on, by this process (`here`) and by the processes it starts, listen on
    `address` (None: `DEFAULT`) instead of every interface; `EVERY_INTERFACE` leaves them there. Returns the
    address a client on this machine dials to reach them.

    Raises BindAddressError if the library cannot be built. A process without it loaded (not started through
    `python -m launch`) warns once, where `here`, that its own servers listen on every interface.
    """
    global _warned
    address = resolve(address)
    os.environ[ENVIRONMENT_VARIABLE] = address
    if address == EVERY_INTERFACE:
        return DEFAULT
    os.environ["LD_PRELOAD"] = _preload_with(library())
    if here and not loaded() and not _warned:
        _warned = True
        warnings.warn(
            f"this process was started without {_SOURCE}'s library, so the servers it starts itself (an in-process "
            f"Reverb server, local_mt nodes) listen on every interface, not {address}: run through `python -m "
            f"launch`, or start Python as `LD_PRELOAD=$(python -m launch.engines.bind_address) python ...`.",
            RuntimeWarning, stacklevel=2,
        )
    return address


if __name__ == "__main__":
    try:
        print(library())
    except BindAddressError as error:
        sys.exit(f"error: {error}")
