"""``$ref`` and ``$fact``: how a reference step names values it cannot know in advance.

``{"$ref": "steps[0].result.contacts[0].email"}`` is a value observed at an earlier step (any field
of its ``StepRecord``: ``result``, ``args``, ``status``, ``reply`` ...); ``{"$fact": "day"}`` is the
value of a fact the simulated user revealed. Both take optional ``prefix``/``suffix`` strings.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import fields
from functools import lru_cache
from typing import Any, cast

from pipeline.core.jsonvalues import clone
from pipeline.core.trajectory import StepRecord

_TOKEN = re.compile(r"\.?([A-Za-z_][A-Za-z0-9_]*)|\[(\d+)\]")
_RECORD_FIELDS = frozenset(f.name for f in fields(StepRecord))


class ResolveError(ValueError):
    """A ``$ref`` or ``$fact`` that names nothing (yet)."""


@lru_cache(maxsize=4096)
def _parse(path: str) -> tuple[str | int, ...]:
    parts: list[str | int] = []
    pos = 0
    while pos < len(path):
        m = _TOKEN.match(path, pos)
        if not m or m.end() == pos:
            raise ResolveError(f"malformed $ref {path!r} at character {pos}")
        parts.append(m.group(1) if m.group(1) is not None else int(m.group(2)))
        pos = m.end()
    if len(parts) < 2 or parts[0] != "steps" or not isinstance(parts[1], int):
        raise ResolveError(f"$ref {path!r} must start with steps[i]")
    return tuple(parts)


def parse_ref(path: Any) -> list[str | int]:
    """``steps[0].result.contacts[0].email`` → ``["steps", 0, "result", "contacts", 0, "email"]``."""
    return list(_parts(path))


def _parts(path: Any) -> tuple[str | int, ...]:
    """``parse_ref`` as the shared, cached tuple (not to be changed)."""
    if not isinstance(path, str):
        raise ResolveError(f"$ref must be a string such as 'steps[0].result', not {path!r}")
    return _parse(path)


def lookup_ref(path: str, records: dict[int, StepRecord]) -> Any:
    """The value ``path`` names among the ``records`` so far (keyed by step id), copied."""
    parts = _parts(path)
    step = records.get(cast(int, parts[1]))  # parse_ref checked that steps[i] leads
    if step is None:
        raise ResolveError(f"$ref {path!r}: step {parts[1]} has not run")
    if len(parts) < 3 or not isinstance(parts[2], str) or parts[2] not in _RECORD_FIELDS:
        raise ResolveError(f"$ref {path!r}: a step has no {parts[2] if len(parts) > 2 else 'field'!r}")
    cur: Any = getattr(step, parts[2])
    for part in parts[3:]:
        if isinstance(part, int) and isinstance(cur, list) and -len(cur) <= part < len(cur):
            cur = cur[part]
        elif isinstance(part, str) and isinstance(cur, dict) and part in cur:
            cur = cur[part]
        else:
            raise ResolveError(f"$ref {path!r}: nothing at {part!r}")
    return clone(cur)


def is_ref(value: Any) -> bool:
    return isinstance(value, dict) and ("$ref" in value or "$fact" in value)


def iter_refs(value: Any) -> Iterator[dict[str, Any]]:
    """Every ``$ref``/``$fact`` object inside an argument value, depth first."""
    if is_ref(value):
        return iter((value,))
    found: list[dict[str, Any]] = []
    if isinstance(value, (dict, list)):
        _collect_refs(value, found)
    return iter(found)


def _collect_refs(value: dict[str, Any] | list[Any], found: list[dict[str, Any]]) -> None:
    """Append the ``$ref``/``$fact`` objects inside a dict or list (not ``value`` itself) to
    ``found``, depth first: a walk that descends only into containers (no generator per value)."""
    for item in value.values() if isinstance(value, dict) else value:
        if isinstance(item, dict):
            if "$ref" in item or "$fact" in item:
                found.append(item)
            else:
                _collect_refs(item, found)
        elif isinstance(item, list):
            _collect_refs(item, found)


def is_literal(args: dict[str, Any]) -> bool:
    """Whether ``args`` hold no ``$ref``/``$fact``, so a step can use them as they are."""
    return not _holds_ref(args)


def _holds_ref(value: Any) -> bool:
    """Whether ``value`` is or holds a ``$ref``/``$fact`` object (``iter_refs`` finds one)."""
    if isinstance(value, dict):
        if "$ref" in value or "$fact" in value:
            return True
        items: Any = value.values()
    elif isinstance(value, list):
        items = value
    else:
        return False
    for item in items:  # noqa: SIM110 - a loop: faster than any() over a generator, on the hot path
        if isinstance(item, (dict, list)) and _holds_ref(item):
            return True
    return False


def uses_fact(value: Any) -> bool:
    """Whether ``value`` holds a ``$fact`` anywhere."""
    return any("$fact" in ref for ref in iter_refs(value))


def resolve(value: Any, records: dict[int, StepRecord], facts: dict[str, str]) -> Any:
    """``value`` with every ``$ref``/``$fact`` replaced by what it names (a new structure)."""
    if isinstance(value, dict):
        if "$ref" in value or "$fact" in value:
            if "$ref" in value:
                out = lookup_ref(value["$ref"], records)  # a non-string $ref is a ResolveError
            else:
                key = value["$fact"]
                if key not in facts:
                    raise ResolveError(f"$fact {key!r} used before the user revealed it")
                out = facts[key]
            if "prefix" in value or "suffix" in value:
                out = f"{value.get('prefix', '')}{out}{value.get('suffix', '')}"
            return out
        return {k: resolve(v, records, facts) for k, v in value.items()}
    if isinstance(value, list):
        return [resolve(v, records, facts) for v in value]
    return value
