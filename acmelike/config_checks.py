"""Validation of config dataclasses: errors that name the field, its value and what it must be."""

from typing import Any


def check_field(config: Any, name: str, ok: bool, allowed: str) -> None:
    """Raises ValueError("<Config>.<name> = <value>; it must be <allowed>.") unless `ok`."""
    if not ok:
        raise ValueError(f"{type(config).__name__}.{name} = {getattr(config, name)!r}; it must be {allowed}.")
