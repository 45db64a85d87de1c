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
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cached_property, lru_cache

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


@dataclass(frozen=True, eq=False)
class DataPattern:
    """A compiled data pattern: ``search`` says whether it matches somewhere in a text. Patterns
    compare (and hash) by identity: ``compile_pattern`` returns one object per source and flags."""

    source: str
    present_sources: tuple[str, ...]
    """The RE2 patterns that must each find a match (the "all of" parts, the rest last)."""
    absent_sources: tuple[str, ...]
    """The RE2 patterns that must each find none (``(?!.*X)`` parts)."""
    literal: str | None = None
    """For a pattern that is plain text (``re.escape`` of a title): that text, folded to lower
    case when the pattern ignores case. Then a search is a substring test, which finds exactly
    what RE2 finds (case-insensitively only for ASCII texts: RE2's case folding of other scripts
    differs from Python's, so those go to RE2)."""
    folded: bool = False
    """Whether ``literal`` is folded (the pattern ignores case)."""

    def search(self, text: str) -> bool:
        """Whether the pattern matches somewhere in ``text``. Remembered per pattern and text up to
        ``REMEMBERED_CHARS`` characters (a grader asks it of the same record fields for every
        variant of a package); a longer text, such as an agent's answer, is matched each time, so
        the memory holds no large texts."""
        if self.literal is not None:
            if not self.folded:
                return self.literal in text
            if text.isascii():
                return self.literal in text.lower()
        return _search(self, text) if len(text) <= REMEMBERED_CHARS else _matches(self, text)

    @cached_property
    def present(self) -> tuple[re2._Regexp, ...]:
        """``present_sources`` compiled (on first use for a plain-text pattern, which always compiles)."""
        return tuple(_program(p) for p in self.present_sources)

    @cached_property
    def absent(self) -> tuple[re2._Regexp, ...]:
        return tuple(_program(p) for p in self.absent_sources)

    def matched(self, text: str) -> str | None:
        """What the pattern grades of ``text`` when the whole pattern matches: the longest part
        that one of its "all of" programs matches (``(?=.*52,750)`` written as a lookahead grades
        "52,750"); None when it does not match."""
        if not self.search(text):
            return None
        return max(self._parts(text), key=len, default="")

    def matched_parts(self, text: str) -> list[str]:
        """Every part of ``text`` the pattern grades when the whole pattern matches: what each of
        its "all of" programs matches (a lookahead per item of a list: each item's line); empty
        when it does not match."""
        return self._parts(text) if self.search(text) else []

    def _parts(self, text: str) -> list[str]:
        """What each ``present`` program matches first in ``text`` (read from the byte spans the
        compiled program gives, as ``_finds`` does, when it can)."""
        if not _DIRECT:
            return [m.group(0) for program in self.present if (m := program.search(text)) is not None]
        encoded = text.encode("utf-8", "surrogatepass")
        spans = (program._regexp.Match(_UNANCHORED, encoded, 0, len(encoded))[0] for program in self.present)
        return [encoded[start:end].decode("utf-8", "surrogatepass") for start, end in spans if start >= 0]

    def fullmatch(self, text: str) -> bool:
        """Whether the whole of ``text`` matches: the last program spans all of it, the others hold."""
        return _finds(self.present[-1], text.encode("utf-8", "surrogatepass"), whole=True) and _matches(self, text)


REMEMBERED_CHARS = 2_000


def _matches(pattern: DataPattern, text: str) -> bool:
    """Every ``present`` program finds a match in ``text``, no ``absent`` one does."""
    encoded = text.encode("utf-8", "surrogatepass")  # a lone surrogate (JSON allows one) is no error
    return (all(_finds(p, encoded) for p in pattern.present)
            and not any(_finds(p, encoded) for p in pattern.absent))


def _finds(program: re2._Regexp, text: bytes, whole: bool = False) -> bool:
    """Whether ``program`` matches somewhere in ``text`` (UTF-8), or all of it when ``whole``. A
    yes or no needs none of ``re2``'s match objects, whose offsets its wrapper maps back to
    characters in Python: the compiled program answers it directly (``_DIRECT``), on the bytes
    the wrapper would pass it."""
    if _DIRECT:
        return program._regexp.Match(_WHOLE if whole else _UNANCHORED, text, 0, len(text))[0] != _NO_MATCH
    return (program.fullmatch(text) if whole else program.search(text)) is not None


_ANCHOR = getattr(getattr(getattr(re2, "_re2", None), "RE2", None), "Anchor", None)
_UNANCHORED, _WHOLE = getattr(_ANCHOR, "UNANCHORED", None), getattr(_ANCHOR, "ANCHOR_BOTH", None)
_NO_MATCH = (-1, -1)


def _direct_works() -> bool:
    """Whether this ``re2`` build's compiled programs answer ``Match`` as ``_finds`` reads it
    (checked once; otherwise its public ``search`` is used)."""
    try:
        program = re2.compile("b+", _OPTIONS)
        return (program._regexp.Match(_UNANCHORED, b"abbc", 0, 4)[0] == (1, 3)
                and program._regexp.Match(_UNANCHORED, b"ac", 0, 2)[0] == _NO_MATCH
                and program._regexp.Match(_WHOLE, b"bb", 0, 2)[0] == (0, 2)
                and program._regexp.Match(_WHOLE, b"bbc", 0, 3)[0] == _NO_MATCH)
    except Exception:  # noqa: BLE001 - any change in the wrapper's internals: use the public API
        return False


_DIRECT = _direct_works()


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
        end = group_end(rest)
        if end is None:
            break
        body = rest[3:end]
        body = re.sub(r"^(?:\.\*\??|\[\\s\\S\]\*\??)", "", body)  # "(?=.*X)": X anywhere
        (present if rest[2] == "=" else absent).append(body)
        rest = rest[end + 1:]
    if present or absent:
        rest = ("^" if anchored else "") + rest
    literal = _literal(rest) if not present and not absent and set(prefix) <= set("(?ims)") else None
    folded = "i" in prefix
    pattern = DataPattern(source, tuple(prefix + p for p in [*present, rest]), tuple(prefix + p for p in absent),
                          literal.lower() if literal is not None and folded else literal, folded)
    if literal is not None:
        return pattern  # plain text compiles: its programs are made when a search needs them
    try:
        pattern.present, pattern.absent  # noqa: B018 - compiled now: an invalid pattern fails here
        return pattern
    except PatternError as exc:
        raise PatternError(f"{exc}; RE2 runs data patterns in linear time and has no look-arounds beyond "
                           "leading (?=.*X)/(?!.*X) parts and one-character (?<!c)/(?!c), nor "
                           "back-references: match with several checks or a character class instead") from None


_LITERAL_CHARS = 1_000
_METACHARACTERS = frozenset(".^$*+?{}[]|()\\")


def _literal(pattern: str) -> str | None:
    """The text a pattern matches when it is plain text (its only escapes those of punctuation and
    spaces, as ``re.escape`` writes them; RE2 compiles every such pattern up to this length),
    else None. Only ASCII: see ``DataPattern.literal``."""
    if not pattern.isascii() or len(pattern) > _LITERAL_CHARS:
        return None
    out: list[str] = []
    escaped = False
    for c in pattern:
        if escaped:
            if c.isalnum():
                return None  # \d, \b, \n ...: a class or an assertion, not a character
            out.append(c)
            escaped = False
        elif c == "\\":
            escaped = True
        elif c in _METACHARACTERS:
            return None
        else:
            out.append(c)
    return None if escaped or not out else "".join(out)


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


def scan(text: str) -> Iterator[tuple[int, str, int]]:
    """Each character of the regular expression ``text`` that is neither escaped nor inside a
    character class (a class's opening ``[`` is), with its index and the group depth before it."""
    depth, i, in_class = 0, 0, False
    while i < len(text):
        c = text[i]
        if c == "\\":
            i += 2
            continue
        if in_class:
            in_class = c != "]"
        else:
            yield i, c, depth
            in_class = c == "["
            depth += (c == "(") - (c == ")")
        i += 1


def group_end(text: str) -> int | None:
    """The index of the ``)`` closing the group that opens ``text``, or None."""
    return next((i for i, c, depth in scan(text) if c == ")" and depth == 1), None)
