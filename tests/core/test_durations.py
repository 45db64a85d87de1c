"""Durations a text states (``text_values.minutes_in``) when the amount is joined to its unit by
a hyphen, as people write them before a noun ("a 45-minute call")."""

from __future__ import annotations

import pytest

from pipeline.core.text_values import minutes_in


@pytest.mark.parametrize(("text", "minutes"), [
    ("Set up a 45-minute call at 2pm.", (45,)), ("a two-hour review", (120,)), ("a half-hour slot", (30,)),
    ("a forty-five-minute call", (45,)), ("a 1.5-hour block", (90,)), ("a 90-min slot", (90,)),
    ("a half hour with Jo", (30,)),
])
def test_a_hyphen_joins_an_amount_to_its_unit(text: str, minutes: tuple[int, ...]) -> None:
    assert minutes_in(text) == minutes


@pytest.mark.parametrize("text", ["the on-hours team", "sku-h7", "non-minute-based billing", "after-hours support"])
def test_a_unit_after_a_hyphen_with_no_amount_is_no_duration(text: str) -> None:
    assert minutes_in(text) == ()


@pytest.mark.parametrize(("text", "minutes"), [
    ("at 3pm, three quarters of an hour", (45,)), ("a quarter of an hour", (15,)), ("3 quarters of an hour", (45,)),
    ("an hour", (60,)),
])
def test_quarters_of_an_hour(text: str, minutes: tuple[int, ...]) -> None:
    assert minutes_in(text) == minutes
