"""The one policy for text that comes from outside the project: model replies, an agent's
arguments over HTTP and MCP, imported task files.

- **Size first.** Bytes are measured before they are decoded or parsed (``decode_json``'s
  ``max_bytes``); a caller that reads a stream stops reading at its own bound.
- **Strict decoding.** Bytes must be UTF-8 (no replacement characters slipped in).
- **Nesting before parsing.** JSON that nests deeper than ``max_depth`` arrays and objects is
  refused from its text (``nesting_exceeds``), before ``json.loads`` builds anything.
- **Text.** A lone surrogate (``"\\ud83d"`` escaped in JSON: not a character, and no UTF-8
  writer can store it) or a NUL (which ends a string in C and in many files) anywhere in a
  string or a key is refused (``text_problem``, ``json_problem``).
- **Counts.** A number a server reports (tokens) must be a whole number in
  ``[0, MAX_COUNT]`` (``count_problem``): 10**30 or -5 is refused, never summed or stored.

Every refusal is an ``UntrustedInput`` whose message says what was wrong in words, with no
traceback: the caller records it (a finding, an episode's ``finish_reason``, an error answer)
and goes on with the next sample.
"""

from __future__ import annotations

import json
import re
from typing import Any

MAX_COUNT = 10**9
"""The largest count (tokens of one reply) a server may report: a billion tokens, far past any
context window, far inside the catalog's 64-bit integers."""

_SURROGATE = re.compile("[\ud800-\udfff]")
_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_BRACKETS = str.maketrans("{}", "[]")


class UntrustedInput(ValueError):
    """Input refused by the policy; the message says why, in one line."""


def text_problem(text: str) -> str | None:
    """Why ``text`` cannot be kept as it is (a lone surrogate, a NUL), or None."""
    if "\x00" in text:
        return f"holds a NUL character (at character {text.index(chr(0))})"
    found = _SURROGATE.search(text)
    if found:
        return f"holds a lone surrogate (U+{ord(found.group()):04X} at character {found.start()}), which is not text"
    return None


def json_problem(value: Any, max_depth: int = 64) -> str | None:
    """Why decoded JSON data cannot be kept: a string or key with a ``text_problem`` (named by its
    path), or nesting deeper than ``max_depth``; None when it is fine. Iterative: any depth is safe."""
    stack: list[tuple[Any, str, int]] = [(value, "", 0)]
    while stack:
        item, path, depth = stack.pop()
        if isinstance(item, str):
            problem = text_problem(item)
            if problem:
                return f"{path or 'the text'} {problem}"
        elif isinstance(item, dict | list):
            if depth >= max_depth:
                return f"nests deeper than {max_depth} levels"
            pairs = item.items() if isinstance(item, dict) else enumerate(item)
            for key, child in pairs:
                if isinstance(key, str) and (problem := text_problem(key)):
                    return f"a key at {path or 'the top'} {problem}"
                stack.append((child, f"{path}[{key!r}]" if isinstance(key, str) else f"{path}[{key}]", depth + 1))
    return None


def nesting_exceeds(text: str, max_depth: int) -> bool:
    """Whether JSON ``text`` nests arrays and objects deeper than ``max_depth``, told from the text
    without parsing it: strings and everything but brackets dropped, each pass removes the
    innermost pairs, so ``max_depth`` passes empty any text that nests no deeper."""
    rest = _NOT_BRACKET.sub("", _STRING.sub("", text)).translate(_BRACKETS)
    for _ in range(max_depth):
        if not rest:
            return False
        shorter = rest.replace("[]", "")
        if shorter == rest:  # unbalanced brackets: json.loads says what is wrong
            return False
        rest = shorter
    return bool(rest)


def decode_json(data: bytes | str, *, max_bytes: int, max_depth: int = 64, what: str = "the input") -> Any:
    """JSON ``data`` decoded under the policy: at most ``max_bytes`` bytes, strict UTF-8, at most
    ``max_depth`` levels (checked before parsing), every string and key clean. ``UntrustedInput``
    naming ``what`` and the problem otherwise."""
    size = len(data) if isinstance(data, bytes) else len(data.encode("utf-8", "surrogatepass"))
    if size > max_bytes:
        raise UntrustedInput(f"{what} is {size:,} bytes, more than the {max_bytes:,} allowed")
    if isinstance(data, bytes):
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise UntrustedInput(f"{what} is not UTF-8 (byte {exc.start}: {data[exc.start:exc.start + 1]!r})") from None
    else:
        text = data
    if nesting_exceeds(text, max_depth):
        raise UntrustedInput(f"{what} nests deeper than {max_depth} levels")
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise UntrustedInput(f"{what} is not JSON ({exc.msg} at line {exc.lineno}, column {exc.colno})") from None
    except RecursionError:
        raise UntrustedInput(f"{what} nests deeper than {max_depth} levels") from None
    problem = json_problem(value, max_depth)
    if problem:
        raise UntrustedInput(f"{what}: {problem}")
    return value


def count_problem(value: Any, name: str, maximum: int = MAX_COUNT) -> str | None:
    """Why ``value`` is not a count a server may report (absent, None, is fine: it reads as 0)."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        return f"{name} is {str(value)[:40]!r}, not a whole number"
    if not 0 <= value <= maximum:
        shown = str(value) if len(str(value)) <= 20 else f"a number of {len(str(value))} digits"
        return f"{name} is {shown}, outside 0..{maximum:,}"
    return None
