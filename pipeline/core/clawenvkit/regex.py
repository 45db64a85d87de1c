"""What a package's ``$regex`` condition means in the terms ClawEnvKit's audit checks have: one
exact value, or substrings that must all be present, or why it has neither.

A pattern is read, never run or compiled into code: Python's own regex parser (``re._parser``)
turns it into its parse tree, and only three shapes of tree are accepted, each meaning exactly
what the returned ``RegexMeaning`` says (the package's patterns run on RE2, whose reading of these
shapes is the same):

- a **literal**, ``Pacific Trade`` (escapes such as ``\\.`` or ``\\ `` are literal characters):
  the field contains that text;
- an **anchored literal**, ``^closed$`` (``^``/``\\A`` … ``$``, without multi-line mode): the
  field is that text;
- **all of**, ``(?s)^(?=.*Desk lamp)(?=.*12 units)`` (dot-all mode, one or more ``(?=.*literal)``
  parts, an optional trailing ``.*``): the field contains every one of those texts.

Anything else (an alternation, a class, a repeat, a prefix or suffix anchor, a look-ahead without
dot-all mode, a negative look-ahead, scoped flags) raises ``NotLiteral`` with what it is.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from re import _constants as sre  # type: ignore[attr-defined]
from re import _parser  # type: ignore[attr-defined]
from typing import Any


class NotLiteral(ValueError):
    """A pattern neither an exact value nor substrings can state (the message says what it is)."""


@dataclass(frozen=True)
class RegexMeaning:
    """``equals``: the field must be exactly this text (``contains`` is then empty); else every
    text in ``contains`` must be a substring. ``folded``: compared ignoring case (the condition's
    ``ignore_case`` or an inline ``(?i)``)."""

    equals: str | None
    contains: tuple[str, ...]
    folded: bool


def read_regex(pattern: str, ignore_case: bool) -> RegexMeaning:
    """The meaning of ``pattern`` (searched anywhere in a field, as ``$regex`` is) as an exact value
    or substrings; ``NotLiteral`` when it has neither form."""
    try:
        tree = _parser.parse(pattern)
    except re.error as exc:
        raise NotLiteral(f"{pattern!r} is not a valid pattern ({exc})") from None
    flags = tree.state.flags
    folded = ignore_case or bool(flags & re.IGNORECASE)
    items: list[tuple[Any, Any]] = list(tree)
    starts = bool(items) and _is_start(items[0])
    body = items[1:] if starts else items
    if body and all(op is sre.ASSERT for op, _ in body[:-1]) and body[0][0] is sre.ASSERT:
        return RegexMeaning(None, _lookaheads(pattern, body, flags), folded)
    ends = bool(body) and _is_end(body[-1], flags)
    text = _literal(body[:-1] if ends else body)
    if text is None:
        raise NotLiteral(f"{pattern!r} is not plain text: only a literal, an anchored literal (^x$) or "
                         "look-aheads of literals ((?s)^(?=.*a)(?=.*b)) have an equality or substring form")
    if starts and ends:
        return RegexMeaning(text, (), folded)
    if starts or ends:
        raise NotLiteral(f"{pattern!r} anchors one end only (a prefix or suffix): no equality or substring form")
    return RegexMeaning(None, (text,), folded)


def _lookaheads(pattern: str, body: list[tuple[Any, Any]], flags: int) -> tuple[str, ...]:
    """The literals of ``(?=.*literal)`` parts, the last item possibly ``.*`` instead."""
    if not flags & re.DOTALL:
        raise NotLiteral(f"{pattern!r}: look-aheads without (?s) only search the first line")
    parts = body if body[-1][0] is sre.ASSERT else body[:-1]
    if parts is not body and not _is_any_run(body[-1]):
        raise NotLiteral(f"{pattern!r}: something other than '.*' follows the look-aheads")
    found = []
    for _, (direction, sub) in parts:
        inner = list(sub)
        text = _literal(inner[1:]) if direction == 1 and inner and _is_any_run(inner[0]) else None
        if text is None:
            raise NotLiteral(f"{pattern!r}: a look-around other than (?=.*literal)")
        found.append(text)
    return tuple(found)


def _is_start(item: tuple[Any, Any]) -> bool:
    return item[0] is sre.AT and item[1] in (sre.AT_BEGINNING, sre.AT_BEGINNING_STRING)


def _is_end(item: tuple[Any, Any], flags: int) -> bool:
    return item[0] is sre.AT and (item[1] is sre.AT_END_STRING
                                  or (item[1] is sre.AT_END and not flags & re.MULTILINE))


def _is_any_run(item: tuple[Any, Any]) -> bool:
    """``.*`` (greedy or lazy)."""
    op, av = item
    return op in (sre.MAX_REPEAT, sre.MIN_REPEAT) and av[0] == 0 and av[1] == sre.MAXREPEAT \
        and [i[0] for i in av[2]] == [sre.ANY]


def _literal(items: list[tuple[Any, Any]]) -> str | None:
    """The text of a run of literal characters (None for anything else; an empty run is "")."""
    if not all(op is sre.LITERAL for op, _ in items):
        return None
    return "".join(chr(code) for _, code in items)
