"""Walking plain JSON data (dicts, lists, scalars)."""

from __future__ import annotations

from typing import Any


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
