"""The import path a program's node processes inherit from the process that launches it.

A node process (local_mp, a Ray worker) unpickles its part of the program: the config, and with it the builder,
networks and environment factories, found by their module. A module of the user's own (`my_agent.py` beside the
script that launches the program, or a folder the script put on `sys.path`) is importable in the launcher only:
a node started by Launchpad runs Launchpad's entry script, whose directory heads its `sys.path`. So every node gets
the launcher's import path in `PYTHONPATH`:

    environment = node_environment()         # {"PYTHONPATH": "/home/me/project:/work/main"}

Only the interpreter's own directories (the standard library, site-packages) are left out: the node's interpreter,
the launcher's, has them. Nothing is read from a run directory here.
"""

import os
import sys
from typing import Dict, List


def _interpreter_directories() -> List[str]:
    return sorted({os.path.abspath(prefix) for prefix in (sys.prefix, sys.base_prefix, sys.exec_prefix)})


def launcher_import_path() -> List[str]:
    """This process's `sys.path`, absolute ("" is the current directory), without the interpreter's own
    directories or entries that are not directories (zip files of the standard library, say)."""
    own = _interpreter_directories()
    path = []
    for entry in sys.path:
        entry = os.path.abspath(entry or os.getcwd())
        inside_interpreter = any(entry == prefix or entry.startswith(prefix + os.sep) for prefix in own)
        if os.path.isdir(entry) and not inside_interpreter and entry not in path:
            path.append(entry)
    return path


def node_environment() -> Dict[str, str]:
    """The environment variables a node process gets on top of the launcher's: `PYTHONPATH`, the launcher's
    import path (`launcher_import_path`)."""
    return {"PYTHONPATH": os.pathsep.join(launcher_import_path())}
