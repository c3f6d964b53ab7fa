"""Hyperparameters from the command line: `--config field=value` parsed to the field's type.

    config = apply_overrides(DQNConfig(), ["learning_rate=5e-4", "hidden_sizes=64,64"])

Values are parsed to each field's annotated type (int, float, bool, str, tuples of those, Optional of those), then
the config's own `__post_init__` checks validate them. Every error is a ValueError that names the field and what is
allowed, so a command line can show it as a parser message.
"""

import dataclasses
import typing
from typing import Any, Sequence

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
