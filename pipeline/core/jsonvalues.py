"""Walking and copying plain JSON data (dicts, lists, scalars)."""

from __future__ import annotations

from typing import Any


def clone(value: Any) -> Any:
    """A deep copy of plain JSON data; several times faster than ``copy.deepcopy``."""
    if isinstance(value, dict):
        return {k: clone(v) for k, v in value.items()}
    if isinstance(value, list):
        return [clone(v) for v in value]
    return value


def leaves(value: Any) -> list[Any]:
    """Every scalar inside ``value``, depth first (a scalar is its own only leaf)."""
    if isinstance(value, dict):
        return [leaf for v in value.values() for leaf in leaves(v)]
    if isinstance(value, list):
        return [leaf for v in value for leaf in leaves(v)]
    return [value]


def strings(value: Any) -> list[str]:
    """Every string inside ``value``."""
    return [leaf for leaf in leaves(value) if isinstance(leaf, str)]
