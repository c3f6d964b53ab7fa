"""Every field of every registered agent's config says what it is, in its class docstring's `Attributes:` section.

Generated from the registry: a field added to any agent's config without its line fails here, and so does a line
naming a field that does not exist (a renamed or removed field). `--list-config` prints the same lines.
"""

import dataclasses
from typing import Optional, Tuple

import pytest

from launch.experiments.overrides import config_field_docs, docstring_attributes, format_config_fields
from launch.registry import AGENTS, agent_definition


def _config_class(name):
    return agent_definition(name).config_class


@pytest.mark.parametrize("name", sorted(AGENTS))
def test_every_config_field_has_a_doc_line(name):
    config_class = _config_class(name)
    undocumented = [field for field, _, _, doc in config_field_docs(config_class) if not doc.strip()]
    assert not undocumented, (
        f"{config_class.__module__}.{config_class.__name__}: add a line for {', '.join(undocumented)} to the class "
        f"docstring's `Attributes:` section (`  field: what it is, its unit or range.`)."
    )


@pytest.mark.parametrize("name", sorted(AGENTS))
def test_no_doc_line_names_a_field_that_does_not_exist(name):
    config_class = _config_class(name)
    fields = {field.name for field in dataclasses.fields(config_class)}
    strays = sorted(set(docstring_attributes(config_class)) - fields)
    assert not strays, f"{config_class.__name__}'s docstring documents {strays}, which are not fields."


@pytest.mark.parametrize("name", sorted(AGENTS))
def test_format_config_fields_lists_every_field_with_its_default(name):
    config_class = _config_class(name)
    text = format_config_fields(config_class)
    lines = text.splitlines()
    assert config_class.__name__ in lines[0]
    defaults = config_class()
    for field in dataclasses.fields(config_class):
        (line,) = [line for line in lines if line.split()[:1] == [field.name]]
        assert repr(getattr(defaults, field.name)) in line, f"{field.name}'s default is missing from {line!r}"
        assert docstring_attributes(config_class)[field.name] in line


def test_a_field_added_without_a_doc_line_is_caught():
    @dataclasses.dataclass(frozen=True)
    class Config:
        """A config.

        Attributes:
          learning_rate: Adam's step size; > 0.
          hidden_sizes: layer sizes,
            continued on a second line.
          removed_field: documents nothing that exists.
        """

        learning_rate: float = 1e-3
        hidden_sizes: Tuple[int, ...] = (64, 64)
        target_entropy: Optional[float] = None

    rows = {name: (type_text, default, doc) for name, type_text, default, doc in config_field_docs(Config)}
    assert rows["learning_rate"] == ("float", 1e-3, "Adam's step size; > 0.")
    assert rows["hidden_sizes"] == ("Tuple[int, ...]", (64, 64), "layer sizes, continued on a second line.")
    assert rows["target_entropy"] == ("Optional[float]", None, "")  # undocumented: the registry test fails on it
    assert set(docstring_attributes(Config)) - set(rows) == {"removed_field"}


def test_lines_are_merged_along_the_parts_the_config_inherits_and_its_own_win():
    @dataclasses.dataclass(frozen=True)
    class Part:
        """A part.

        Attributes:
          batch_size: the part's line.
          discount: the part's line, which the config replaces.
        """

        batch_size: int = 256
        discount: float = 0.99

    @dataclasses.dataclass(frozen=True)
    class Config(Part):
        """A config made of a part.

        Attributes:
          discount: the config's own line.
          learning_rate: Adam's step size.
        """

        batch_size: int = 64  # the part's field with the config's default
        learning_rate: float = 1e-3

    assert docstring_attributes(Config) == {
        "batch_size": "the part's line.", "discount": "the config's own line.", "learning_rate": "Adam's step size."}
    # The config's own fields first; a part's field the config re-declares stays with its part.
    rows = [(name, default, doc) for name, _, default, doc in config_field_docs(Config)]
    assert rows == [("learning_rate", 1e-3, "Adam's step size."), ("batch_size", 64, "the part's line."),
                    ("discount", 0.99, "the config's own line.")]
