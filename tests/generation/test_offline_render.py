"""Sandboxed rendering of template bodies (``pipeline/generation/render.py``)."""

from __future__ import annotations

import re

import pytest
from jinja2.exceptions import SecurityError, UndefinedError

from pipeline.generation.render import add_days, money, money_re, parse_body, render_body, split_weight


@pytest.mark.parametrize(("value", "found", "not_found"), [
    (1234.5, ["1,234.50 USD", "total 1234.5", "1234.50"], ["11,234.50", "1,234.55", "1,234.501"]),
    (1200.0, ["1,200", "1200.00 USD", "$1,200.0"], ["1,2000", "21,200", "1,200.50"]),
    (45.05, ["45.05"], ["45.5", "145.05"]),
    (1234567.25, ["1,234,567.25", "1234567.25"], ["1,234,567.2"]),
])
def test_money_re_finds_the_amount_however_it_is_written(value: float, found: list[str],
                                                         not_found: list[str]) -> None:
    pattern = money_re(value)
    assert re.search(pattern, money(value))
    for text in found:
        assert re.search(pattern, text), text
    for text in not_found:
        assert not re.search(pattern, text), text


def test_split_weight_sums_to_the_total() -> None:
    for total, n in [(0.4, 9), (0.4, 11), (0.35, 3), (1.0, 7)]:
        parts = split_weight(total, n)
        assert len(parts) == n and abs(sum(parts) - total) < 1e-9
        assert max(parts) - min(parts) < 0.001


def test_add_days_keeps_the_time_part() -> None:
    assert add_days("2026-12-30T10:00", 3) == "2027-01-02T10:00"
    assert add_days("2026-03-01", -1) == "2026-02-28"


def test_body_filters_and_yaml_keep_dates_as_text() -> None:
    body = ('d: {{ day }}\nw: {{ day | weekday }}\nn: {{ 3 | word }}\nt: {{ name | q }}\nu: {{ "book it" | upfirst }}\n'
            'p: {{ "Harbor Foods" | poss }}, {{ "Maya Patel" | poss }}\n')
    data = parse_body(render_body(body, {"day": "2026-12-03", "name": 'say "hi": ok'}))
    assert data == {"d": "2026-12-03", "w": "Thursday", "n": "three", "t": 'say "hi": ok', "u": "Book it",
                    "p": "Harbor Foods', Maya Patel's"}


def test_rendering_is_sandboxed_and_strict() -> None:
    with pytest.raises(SecurityError):
        render_body("{{ ''.__class__.__mro__[1].__subclasses__() }}", {})
    with pytest.raises(UndefinedError):
        render_body("x: {{ missing }}", {})


def test_a_body_must_be_a_mapping() -> None:
    with pytest.raises(ValueError, match="not a mapping"):
        parse_body("- just\n- a list\n")
