"""Regular expressions from package data (``$regex`` matchers, ``answer_matches``), run by RE2.

Patterns come from generated packages and are matched against text an agent writes, so a pattern
such as ``(a+)+$`` must not be able to hang a verifier or an RL scorer. Every such pattern runs on
RE2 (``google-re2``), whose matching time is linear in the text. RE2 has no look-arounds and no
back-references; the look-arounds that package authors write for two common needs are rewritten
into RE2 programs that mean the same:

- **all of** (a conjunction at the start): ``(?s)^(?=.*trunk)(?=.*native).*allowed`` holds when
  each ``(?=.*X)`` part's ``X`` is found, and the rest (``.*allowed``) matches where the pattern
  says (at the start after ``^``, anywhere without it); ``(?!.*X)`` parts require ``X`` absent.
  Inline flags before the parts apply to every part.
- **not next to** (a one-character look-behind or look-ahead): ``(?<![\\d.])72(?!\\d)`` becomes
  ``(?:^|[^\\d.])72(?:$|\\D)``: the same strings match (only the span differs).

Any other pattern RE2 cannot compile is invalid (``PatternError`` with RE2's reason and what to
write instead), and a package using one is rejected when it loads (``schema_invalid``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

import re2

_OPTIONS = re2.Options()
_OPTIONS.log_errors = False
_FLAGS = re.compile(r"^\(\?[aiLmsux]+\)")
_CLASS = r"\[(?:\\.|[^\]\\])+\]|\\[dDwWsS]|\\.|[^\\()\[\]|?*+{}^$.]"
_BEHIND = re.compile(rf"\(\?<!({_CLASS})\)")
_AHEAD = re.compile(rf"\(\?!({_CLASS})\)")
_SHORTHAND_NEGATION = {"\\d": "\\D", "\\D": "\\d", "\\w": "\\W", "\\W": "\\w", "\\s": "\\S", "\\S": "\\s"}


class PatternError(ValueError):
    """A pattern RE2 cannot run, even rewritten."""


@dataclass(frozen=True)
class DataPattern:
    """A compiled data pattern: ``search`` says whether it matches somewhere in a text."""

    source: str
    present: tuple[re2._Regexp, ...]
    """Programs that must each find a match (the "all of" parts, the rest last)."""
    absent: tuple[re2._Regexp, ...]
    """Programs that must each find none (``(?!.*X)`` parts)."""

    def search(self, text: str) -> bool:
        """Whether the pattern matches somewhere in ``text``. Remembered per pattern and text up to
        ``REMEMBERED_CHARS`` characters (a grader asks it of the same record fields for every
        variant of a package); a longer text, such as an agent's answer, is matched each time, so
        the memory holds no large texts."""
        return _search(self, text) if len(text) <= REMEMBERED_CHARS else _matches(self, text)

    def fullmatch(self, text: str) -> bool:
        """Whether the whole of ``text`` matches: the last program spans all of it, the others hold."""
        return self.present[-1].fullmatch(text) is not None and _matches(self, text)


REMEMBERED_CHARS = 2_000


def _matches(pattern: DataPattern, text: str) -> bool:
    """Every ``present`` program finds a match in ``text``, no ``absent`` one does."""
    return (all(p.search(text) is not None for p in pattern.present)
            and not any(p.search(text) is not None for p in pattern.absent))


_search = lru_cache(maxsize=4096)(_matches)


@lru_cache(maxsize=8192)
def compile_pattern(source: str, ignore_case: bool = False) -> DataPattern:
    """``source`` as RE2 programs (see the module docstring). Raises ``PatternError``."""
    flags = _FLAGS.match(source)
    prefix = flags.group(0) if flags else ""
    rest = source[len(prefix):]
    prefix = ("(?i)" if ignore_case else "") + prefix
    anchored = rest.startswith("^") and rest[1:].startswith(("(?=", "(?!"))
    if anchored:
        rest = rest[1:]
    present: list[str] = []
    absent: list[str] = []
    while rest.startswith(("(?=", "(?!")):
        end = _group_end(rest)
        if end is None:
            break
        body = rest[3:end]
        body = re.sub(r"^(?:\.\*\??|\[\\s\\S\]\*\??)", "", body)  # "(?=.*X)": X anywhere
        (present if rest[2] == "=" else absent).append(body)
        rest = rest[end + 1:]
    if present or absent:
        rest = ("^" if anchored else "") + rest
    try:
        return DataPattern(source, tuple(_program(prefix + p) for p in [*present, rest]),
                           tuple(_program(prefix + p) for p in absent))
    except PatternError as exc:
        raise PatternError(f"{exc}; RE2 runs data patterns in linear time and has no look-arounds beyond "
                           "leading (?=.*X)/(?!.*X) parts and one-character (?<!c)/(?!c), nor "
                           "back-references: match with several checks or a character class instead") from None


def _program(pattern: str) -> re2._Regexp:
    rewritten = _BEHIND.sub(lambda m: f"(?:^|{_negate(m.group(1))})", pattern)
    rewritten = _AHEAD.sub(lambda m: f"(?:$|{_negate(m.group(1))})", rewritten)
    try:
        return re2.compile(rewritten, _OPTIONS)
    except re2.error as exc:
        reason = exc.args[0].decode() if exc.args and isinstance(exc.args[0], bytes) else str(exc)
        raise PatternError(f"RE2 cannot run {pattern!r}: {reason}") from None


def _negate(one: str) -> str:
    """A character class matching any one character ``one`` does not."""
    if one in _SHORTHAND_NEGATION:
        return _SHORTHAND_NEGATION[one]
    if one.startswith("["):
        inner = one[1:-1]
        return f"[{inner[1:]}]" if inner.startswith("^") else f"[^{inner}]"
    return f"[^{one}]"


def _group_end(text: str) -> int | None:
    """The index of the ``)`` closing the group that opens ``text``, or None."""
    depth = 0
    i = 0
    in_class = False
    while i < len(text):
        c = text[i]
        if c == "\\":
            i += 2
            continue
        if in_class:
            in_class = c != "]"
        elif c == "[":
            in_class = True
        elif c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth == 0:
                return i
        i += 1
    return None
