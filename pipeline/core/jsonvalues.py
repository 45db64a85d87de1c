"""Walking, copying and parsing plain JSON data (dicts, lists, scalars), within bounds."""

from __future__ import annotations

import json
from typing import Any

MAX_DEPTH = 64
"""How deep JSON data may nest (objects and arrays); a package needs about 10."""


class ShapeError(ValueError):
    """JSON data nested too deep, or too large."""


def check_shape(value: Any, max_depth: int = MAX_DEPTH, max_chars: int | None = None) -> None:
    """Raise ``ShapeError`` when ``value`` nests deeper than ``max_depth`` or its strings and keys
    hold more than ``max_chars`` characters in all. Iterative: any depth is measured safely."""
    chars = 0
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, (dict, list)):
            if depth >= max_depth:
                raise ShapeError(f"nested deeper than {max_depth} levels")
            children = item.items() if isinstance(item, dict) else enumerate(item)
            for key, child in children:
                chars += len(key) if isinstance(key, str) else 0
                stack.append((child, depth + 1))
        elif isinstance(item, str):
            chars += len(item)
        if max_chars is not None and chars > max_chars:
            raise ShapeError(f"larger than {max_chars:,} characters of text")


def parse_json(text: str, max_depth: int = MAX_DEPTH) -> Any:
    """``json.loads`` that refuses data nested deeper than ``max_depth`` (``ShapeError``) instead
    of exhausting the stack; invalid JSON raises ``json.JSONDecodeError`` as usual."""
    try:
        value = json.loads(text)
    except RecursionError:
        raise ShapeError(f"nested deeper than {max_depth} levels") from None
    check_shape(value, max_depth)
    return value


def clone(value: Any) -> Any:
    """A deep copy of plain JSON data; several times faster than ``copy.deepcopy``."""
    if isinstance(value, dict):
        return {k: clone(v) for k, v in value.items()}
    if isinstance(value, list):
        return [clone(v) for v in value]
    return value


def leaves(value: Any) -> list[Any]:
    """Every scalar inside ``value``, depth first (a scalar is its own only leaf)."""
    if not isinstance(value, (dict, list)):
        return [value]
    out: list[Any] = []
    _collect(value, out, object)
    return out


def strings(value: Any) -> list[str]:
    """Every string inside ``value``."""
    if not isinstance(value, (dict, list)):
        return [value] if isinstance(value, str) else []
    out: list[str] = []
    _collect(value, out, str)
    return out


def _collect(value: dict[str, Any] | list[Any], out: list[Any], kind: type) -> None:
    """Append the scalars of ``kind`` inside a dict or list to ``out``, depth first."""
    for item in value.values() if isinstance(value, dict) else value:
        if isinstance(item, (dict, list)):
            _collect(item, out, kind)
        elif isinstance(item, kind):
            out.append(item)
