"""Files written whole: whoever reads one (a resumed run, a launcher polling a node, a runner counting finished
cells) finds the old file or the new one, never the first half of the new one.

    with open_whole(path) as f:    # f is `path + ".tmp"`
      f.write(...)                 # an error here (a full disk, a render that raises) removes the .tmp
                                   # and leaves `path` as it was
    # leaving the block renames the .tmp over `path` (one `os.replace`, atomic on POSIX)

A process killed inside the block leaves its `.tmp` beside `path`; the next write replaces it.
"""

import contextlib
import json
import os
from typing import Any, Iterator, Optional, TextIO

TEMPORARY_SUFFIX = ".tmp"


@contextlib.contextmanager
def open_whole(path: str, newline: Optional[str] = None) -> Iterator[TextIO]:
    """A text file to write `path`'s new contents to; `path` takes them only when the block ends without an error.

    Args:
      path: the file to replace (or create).
      newline: as `open`'s (the `csv` module wants "").
    """
    temporary = path + TEMPORARY_SUFFIX
    try:
        with open(temporary, "w", newline=newline) as f:
            yield f
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.remove(temporary)
        raise


def write_text(path: str, text: str) -> None:
    """Replaces `path` with `text`, whole or not at all."""
    with open_whole(path) as f:
        f.write(text)


def write_json(path: str, data: Any, indent: Optional[int] = 2) -> None:
    """Replaces `path` with `data` as JSON, whole or not at all: data that `json` cannot encode, or a disk that
    fills part way, leaves `path` as it was."""
    with open_whole(path) as f:
        json.dump(data, f, indent=indent)
