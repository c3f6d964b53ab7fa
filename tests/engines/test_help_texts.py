"""`--help` of the three commands reads in whole sentences: each description is its module docstring's first
paragraph (the first line alone cut "...and print a"), and no flag's help stops on a word that cannot end one
("--resume: the run's own")."""

import importlib
import re

import pytest
from run_helpers import command_line

from launch.cli import description

COMMANDS = ["launch", "launch.cli.evaluate", "launch.cli.record"]
# Words a cut text ends on; a whole sentence, or a phrase naming a default or a choice, does not.
DANGLING = {"a", "an", "the", "of", "and", "or", "to", "own", "its", "their", "with", "for", "in", "by", "on", "at",
            "from", "as", "is"}


def _description_shown(help_text: str) -> str:
    """The paragraph argparse prints between the usage lines and the first argument group, joined into one line."""
    paragraphs = help_text.split("\n\n")
    return " ".join(paragraphs[1].split())


@pytest.mark.parametrize("module", COMMANDS)
def test_the_description_is_the_docstring_first_paragraph_whole(module):
    result = command_line("--help", module=module)
    assert result.returncode == 0, result.stderr
    docstring = importlib.import_module("launch.cli.train" if module == "launch" else module).__doc__
    shown = _description_shown(result.stdout)
    assert shown == description(docstring) and shown.endswith("."), shown


def test_a_description_joins_a_wrapped_first_sentence():
    assert description("First words wrapped\n    onto the next line.\n\n    Details.") == (
        "First words wrapped onto the next line.")


def test_no_flag_help_stops_mid_sentence():
    from launch.cli.train import make_parser

    cut = {}
    for action in make_parser()._actions:
        last = re.findall(r"[\w']+", action.help or "")[-1:]
        if last and last[0].lower() in DANGLING:
            cut[action.option_strings[0]] = action.help
    assert not cut, f"help texts that stop mid-sentence: {cut}"
