"""The command line: `python -m launch` (train), `python -m launch.cli.evaluate`, `python -m launch.cli.record`."""

import inspect


def description(docstring: str) -> str:
    """A command's `--help` description: its module docstring's first paragraph, joined into one line.

    The first line alone (what the parsers took before) cut a sentence that wraps onto the next line in the middle,
    "...and print a"."""
    return " ".join(inspect.cleandoc(docstring).split("\n\n")[0].split())
