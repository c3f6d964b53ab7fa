"""Hyperparameters from the command line: `--config field=value` parsed to the field's type.

    config = apply_overrides(DQNConfig(), ["learning_rate=5e-4", "hidden_sizes=64,64"])

Values are parsed to each field's annotated type (int, float, bool, str, tuples of those, Optional of those), then
the config's own `__post_init__` checks validate them. Every error is a ValueError that names the field and what is
allowed, so a command line can show it as a parser message.

Each field's meaning is one line of an `Attributes:` section (Google style) in the docstring of the config class or of
a part it inherits (`agents.config_parts`); `format_config_fields` lists them with types and defaults
(`python -m launch --agent dqn --list-config`).
"""

import dataclasses
import inspect
import re
import typing
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

_TRUE = {"true", "1", "yes", "on"}
_FALSE = {"false", "0", "no", "off"}


def _parse(field: str, text: str, annotation: Any) -> Any:
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin is typing.Union and type(None) in args:  # Optional[X]
        if text.strip().lower() in ("none", "null", ""):
            return None
        (inner,) = [a for a in args if a is not type(None)]
        return _parse(field, text, inner)
    if origin in (tuple, typing.Tuple):
        items = [item for item in text.strip().strip("()[]").replace(" ", "").split(",") if item]
        element = args[0] if args else str
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(_parse(field, item, element) for item in items)
        if len(items) != len(args):
            raise ValueError(f"--config {field}: expected {len(args)} comma-separated values, got {text!r}.")
        return tuple(_parse(field, item, arg) for item, arg in zip(items, args))
    if annotation is bool:
        lowered = text.strip().lower()
        if lowered in _TRUE:
            return True
        if lowered in _FALSE:
            return False
        raise ValueError(f"--config {field}={text!r}: expected a boolean (true/false).")
    if annotation in (int, float, str):
        try:
            if annotation is int:
                value = float(text)
                if not value.is_integer():
                    raise ValueError
                return int(value)
            return annotation(text)
        except ValueError:
            raise ValueError(f"--config {field}={text!r}: expected {annotation.__name__}.") from None
    raise ValueError(f"--config {field}: fields of type {annotation!r} cannot be set from the command line.")


def parse_assignment(text: str) -> tuple:
    """'field=value' -> (field, value text); ValueError if there is no '='."""
    field, sep, value = text.partition("=")
    if not sep or not field.strip():
        raise ValueError(f"--config expects field=value (e.g. learning_rate=3e-4), got {text!r}.")
    return field.strip(), value.strip()


def assignments(values: Mapping[str, Any]) -> List[str]:
    """Field values (a config's, a preset's, or read back from JSON) as 'field=value' texts, which `apply_overrides`
    parses back to the same values: the one way a value is written as `--config` text."""
    return [f"{field}={_as_text(value)}" for field, value in values.items()]


def _as_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        return ",".join(_as_text(item) for item in value)
    if value is None:
        return "none"
    return repr(value) if isinstance(value, float) else str(value)


def apply_overrides(config: Any, assignments: Sequence[str]) -> Any:
    """A copy of the frozen dataclass `config` with `assignments` ('field=value') applied and validated."""
    fields = {f.name: f for f in dataclasses.fields(config)}
    hints = typing.get_type_hints(type(config))
    changes = {}
    for assignment in assignments:
        field, text = parse_assignment(assignment)
        if field not in fields:
            raise ValueError(
                f"--config {field}: {type(config).__name__} has no field {field!r}. "
                f"Valid fields: {', '.join(sorted(fields))}."
            )
        changes[field] = _parse(field, text, hints[field])
    return dataclasses.replace(config, **changes)  # runs the config's own checks


_ATTRIBUTE = re.compile(r"^(\w+)\s*(?:\([^)]*\))?:\s*(.*)$")  # "name: doc" or "name (type): doc"


def docstring_attributes(config_class: type) -> Dict[str, str]:
    """Field name -> its documentation (continuation lines joined), from the `Attributes:` sections of the
    docstrings of `config_class` and of the classes it inherits from (the config parts of `agents.config_parts`).
    Where several document a field, the one nearest `config_class` in its method resolution order wins."""
    docs: Dict[str, str] = {}
    for cls in reversed(config_class.__mro__):
        docs.update(_own_attributes(vars(cls).get("__doc__")))
    return docs


def _own_attributes(docstring: Optional[str]) -> Dict[str, str]:
    """The `Attributes:` section of one docstring; empty if it has none."""
    lines = inspect.cleandoc(docstring or "").splitlines()
    try:
        start = next(i for i, line in enumerate(lines) if line.strip() == "Attributes:") + 1
    except StopIteration:
        return {}
    docs: Dict[str, str] = {}
    indent, name = None, None
    for line in lines[start:]:
        if not line.strip():
            continue
        depth = len(line) - len(line.lstrip())
        if indent is None:
            indent = depth
        if depth < indent:  # the section ended (e.g. "Raises:" or prose at the docstring's own indent)
            break
        match = _ATTRIBUTE.match(line.strip())
        if depth == indent and match:
            name = match.group(1)
            docs[name] = match.group(2).strip()
        elif name is not None:
            docs[name] = f"{docs[name]} {line.strip()}".strip()
    return docs


def _fields_by_part(config_class: type) -> List[dataclasses.Field]:
    """`config_class`'s fields, its own first, then each inherited part's, in method resolution order.

    A field belongs to the most basic class that declares it: a part's field that the agent re-declares (to give it
    its own default) stays with its part. `dataclasses.fields` would list the last part's fields first."""
    mro = config_class.__mro__
    owner = {field.name: max(i for i, cls in enumerate(mro) if field.name in inspect.get_annotations(cls))
             for field in dataclasses.fields(config_class)}
    return sorted(dataclasses.fields(config_class), key=lambda field: owner[field.name])


def _type_text(annotation: Any) -> str:
    if isinstance(annotation, str):
        return annotation
    if isinstance(annotation, type):
        return annotation.__name__
    return str(annotation).replace("typing.", "")


def config_field_docs(config_class: type) -> List[Tuple[str, str, Any, str]]:
    """(name, type text, default, doc) for every field of the config dataclass `config_class`: the class's own
    fields first, then each part's (`_fields_by_part`).

    The doc is the field's line in an `Attributes:` section (`docstring_attributes`; "" if it has none; a test
    requires one for every registered agent's config). A field without a default has `dataclasses.MISSING` as its default.
    """
    docs = docstring_attributes(config_class)
    hints = typing.get_type_hints(config_class)
    rows = []
    for field in _fields_by_part(config_class):
        if field.default is not dataclasses.MISSING:
            default = field.default
        elif field.default_factory is not dataclasses.MISSING:
            default = field.default_factory()
        else:
            default = dataclasses.MISSING
        rows.append((field.name, _type_text(hints.get(field.name, field.type)), default, docs.get(field.name, "")))
    return rows


def format_config_fields(config_class: type, preset: Optional[Tuple[str, Mapping[str, Any]]] = None) -> str:
    """One aligned line per field of `config_class`: name, type, default, doc; the header names the class.

    With `preset` = (its name, the fields it sets, already validated), a column beside the default gives each
    field's value under it (blank where the preset keeps the default)."""
    rows = [
        (name, type_text, "(required)" if default is dataclasses.MISSING else repr(default), doc)
        for name, type_text, default, doc in config_field_docs(config_class)
    ]
    values = dict(preset[1]) if preset else {}
    columns = [(name, type_text, default, repr(values[name]) if name in values else "", doc)
               for name, type_text, default, doc in rows]
    headers = ("field", "type", "default") + ((f"--preset {preset[0]}",) if preset else ())
    widths = [max([len(header)] + [len(row[i]) for row in columns]) for i, header in enumerate(headers)]
    lines = [f"{config_class.__name__}: set a field with --config FIELD=VALUE"]
    header = "  ".join(f"{header:<{width}}" for header, width in zip(headers, widths))
    lines.append(f"  {header}  meaning")
    for row in columns:
        cells = "  ".join(f"{cell:<{width}}" for cell, width in zip(row, widths))
        lines.append(f"  {cells}  {row[-1]}".rstrip())
    return "\n".join(lines)
