"""The numbers a package's checks want the agent to report or write, read off the reference's run."""

from __future__ import annotations

import re
from typing import Any

from pipeline.core.grading import graded_in_answer
from pipeline.core.package import TaskPackage
from pipeline.core.patterns import compile_pattern
from pipeline.core.text_values import minutes_in, numbers_in
from pipeline.verify.check_values import required_values, values_of

_UNIT_OF_TIME = re.compile(r"\s*(?:hours?|hrs?|h|minutes?|mins?|m)\b", re.IGNORECASE)


def is_number(value: Any) -> bool:
    """Whether ``value`` is an int or a float (not a bool)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def graded_numbers(package: TaskPackage, answer: str, args: dict[int, dict[str, Any]]) -> list[float]:
    """The numbers the checks want the agent to report or write: those of ``answer_contains``
    values, of what an ``answer_matches`` pattern matches of the reference's ``answer``, and of what a
    pattern a state check puts on a written text matches of the reference's text (``args``: the
    resolved arguments of each step), and the numbers a state check pins (an amount of 350); the
    longest duration a text states, in minutes and in hours. Each once, in that order."""
    texts = graded_in_answer(package, answer)
    pinned: list[float] = []
    for check in package.checks:
        if check.kind not in ("answer_contains", "answer_matches"):
            for field, matcher in required_values(check):
                pinned += [round(float(v), 2) for v in values_of(matcher) if is_number(v)]
                if isinstance(matcher, dict) and isinstance(matcher.get("$regex"), str):
                    pattern = compile_pattern(matcher["$regex"], bool(vars(check).get("ignore_case")))
                    texts += [m for a in args.values() if isinstance(a.get(field), str)
                              and (m := pattern.matched(a[field]))]
    durations = [float(max(minutes)) for t in texts if (minutes := minutes_in(t))]  # "4 hours 15 minutes": 255, 4.25 hours
    return list(dict.fromkeys([*(round(float(m.value), 2) for t in texts for m in numbers_in(t)
                                 if m.kind in ("number", "money") and not _UNIT_OF_TIME.match(t, m.end)),
                               *pinned, *durations,
                               *(round(d / 60, 2) for d in durations)]))
