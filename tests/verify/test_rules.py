"""Unit semantics of the verification rules the corpus exercises end to end
(``tests/verify/test_verify_corpus.py``): each one here is a rule stated in a module docstring."""

from __future__ import annotations

import re
from datetime import date

import pytest

from pipeline.core.services import intent_pattern
from pipeline.verify.aggregates import groups, totals
from pipeline.verify.consistency import request_quantities
from pipeline.verify.grounding import Evidence
from pipeline.verify.perturbations import is_free_text


@pytest.mark.parametrize(("text", "asks"), [
    ("Let Kwame Asante know the contract is signed", True),
    ("let ops@corp.example know on their ticket", True),
    ("Please let me know the order number", False),
    ("update his phone number", False),
])
def test_a_message_intent_needs_someone_to_tell(text: str, asks: bool) -> None:
    pattern = intent_pattern(["message", "tell", "let _ know", "notif"])
    assert (re.search(rf"\b(?:{pattern})", text, re.IGNORECASE) is not None) is asks


def test_counts_that_add_up_are_stated() -> None:
    assert 4 in request_quantities("two slots on Wednesday and two on Thursday")
    assert 4 in request_quantities("a todo for each of the three reps, plus one for me")
    assert 5 not in request_quantities("two slots on Wednesday and two on Thursday")


@pytest.mark.parametrize(("value", "key", "free"), [
    ("Quarterly review with the design team", "title", True),
    ("+44 20 7946 0321", "phone", False),
    ("jonas.weber", "assignee", False),
    ("ana@corp.example", "to", False),
    ("Focus", "title", False),
])
def test_free_text_is_what_the_agent_composes(value: str, key: str, free: bool) -> None:
    assert is_free_text(key, value, {"type": "string"}) is free


def test_a_time_range_states_its_length_and_a_duration_moves_a_time() -> None:
    evidence = Evidence()
    evidence.read_text("Block 13:00-17:00 and start 30 minutes before the 10:00 stand-up", date(2026, 12, 1))
    assert evidence.has_number(240) and evidence.has_number(4)
    assert evidence.has_time("09:30") and not evidence.has_time("09:45")


def test_a_weekday_after_a_stated_date_is_that_week_s() -> None:
    evidence = Evidence()
    evidence.read_text("two on Wednesday 2026-12-09 and two on Thursday", date(2026, 12, 1))
    assert "2026-12-10" in evidence.dates


def test_groups_cover_values_months_and_exclusions() -> None:
    records = [{"id": f"t-{i}", "category": c, "date": d, "amount": a, "stage": s}
               for i, (c, d, a, s) in enumerate([("software", "2026-11-03", 100.0, "won"),
                                                 ("software", "2026-11-20", 50.5, "open"),
                                                 ("travel", "2026-11-21", 80.0, "lost"),
                                                 ("software", "2026-10-30", 999.0, "open")])]
    sums = {t for g in groups(records) for t in totals(g)}
    assert 150.5 in sums   # software in November
    assert 1049.5 in sums  # neither won nor lost
    assert 1149.5 in sums  # software
    assert 230.5 in sums   # November
