"""Walking, copying and parsing plain JSON data (dicts, lists, scalars), within bounds."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

MAX_DEPTH = 64
"""How deep JSON data may nest (objects and arrays); a package needs about 10."""


class ShapeError(ValueError):
    """JSON data nested too deep, or too large."""


def check_shape(value: Any, max_depth: int = MAX_DEPTH, max_chars: int | None = None) -> None:
    """Raise ``ShapeError`` when ``value`` nests deeper than ``max_depth`` or its strings and keys
    hold more than ``max_chars`` characters in all (depth is checked first). Safe at any depth: the
    walk recurses no deeper than ``max_depth`` calls."""
    if isinstance(value, (dict, list)):
        chars = _text_size(value, 0, max_depth)
    else:
        chars = len(value) if isinstance(value, str) else 0
    if max_chars is not None and chars > max_chars:
        raise ShapeError(f"larger than {max_chars:,} characters of text")


def _text_size(value: dict[Any, Any] | list[Any], depth: int, max_depth: int) -> int:
    """The characters of the strings and keys inside ``value``, a container at ``depth``."""
    if depth >= max_depth:
        raise ShapeError(f"nested deeper than {max_depth} levels")
    chars = 0
    if isinstance(value, dict):
        for key in value:
            if isinstance(key, str):
                chars += len(key)
        children: Any = value.values()
    else:
        children = value
    for child in children:
        if isinstance(child, str):
            chars += len(child)
        elif isinstance(child, (dict, list)):
            chars += _text_size(child, depth + 1, max_depth)
    return chars


def load_json(text: str, max_depth: int = MAX_DEPTH) -> Any:
    """``json.loads`` that raises ``ShapeError`` (nested deeper than ``max_depth``) where the
    parser itself runs out of stack (about 1,000 levels) instead of ``RecursionError``. Shallower
    data is not measured: bound it with ``check_shape`` (package validation does)."""
    try:
        return json.loads(text)
    except RecursionError:
        raise ShapeError(f"nested deeper than {max_depth} levels") from None


def parse_json(text: str, max_depth: int = MAX_DEPTH) -> Any:
    """``json.loads`` that refuses data nested deeper than ``max_depth`` (``ShapeError``) instead
    of exhausting the stack; invalid JSON raises ``json.JSONDecodeError`` as usual."""
    value = load_json(text, max_depth)
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
    _collect_leaves(value, out.append)
    return out


def strings(value: Any) -> list[str]:
    """Every string inside ``value``, depth first."""
    if not isinstance(value, (dict, list)):
        return [value] if isinstance(value, str) else []
    out: list[str] = []
    _collect_strings(value, out.append)
    return out


# Two walks rather than one taking the kind to keep: the verifier walks states and results many
# times per package, and testing for a string first (most leaves are strings) with a bound
# ``append`` makes these walks about a third faster.


def _collect_leaves(value: dict[str, Any] | list[Any], append: Callable[[Any], None]) -> None:
    """``append`` each scalar inside a dict or list, depth first."""
    for item in value.values() if isinstance(value, dict) else value:
        if isinstance(item, (dict, list)):
            _collect_leaves(item, append)
        else:
            append(item)


def _collect_strings(value: dict[str, Any] | list[Any], append: Callable[[str], None]) -> None:
    """``append`` each string inside a dict or list, depth first."""
    for item in value.values() if isinstance(value, dict) else value:
        if isinstance(item, str):
            append(item)
        elif isinstance(item, (dict, list)):
            _collect_strings(item, append)
