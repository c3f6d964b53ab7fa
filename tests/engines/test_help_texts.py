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
    from launch.cli.options import help_lines

    cut = {}
    for flag, text in help_lines().items():
        last = re.findall(r"[\w']+", text)[-1:]
        if not last or last[0].lower() in DANGLING:
            cut[flag] = text
    assert not cut, f"help texts that stop mid-sentence, or are missing: {cut}"


def test_help_texts_name_the_defaults_the_configs_have():
    """Defaults that a flag's help states in words, because the run decides them, are the configs' own."""
    from launch.cli.options import help_lines
    from launch.experiments.config import ExperimentConfig, OfflineExperimentConfig
    from launch.lifecycle.run_directory import DEFAULT_CHECKPOINT_MINUTES

    lines = help_lines()
    assert f"{OfflineExperimentConfig.evaluation_every} offline" in lines["--eval-every"]
    assert f"default {ExperimentConfig.return_window} (offline: evaluation episodes, default " \
        f"{OfflineExperimentConfig.return_window})" in lines["--return-window"]
    assert f"default {DEFAULT_CHECKPOINT_MINUTES:g};" in lines["--checkpoint-every"]
