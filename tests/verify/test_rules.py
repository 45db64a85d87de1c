"""Unit semantics of the verification rules the corpus exercises end to end
(``tests/verify/test_verify_corpus.py``): each one here is a rule stated in a module docstring."""

from __future__ import annotations

import re
from datetime import date

import pytest

from pipeline.core.package import load_package
from pipeline.core.services import intent_pattern
from pipeline.verify.aggregates import groups, totals
from pipeline.verify.consistency import request_quantities
from pipeline.verify.evidence import Evidence, starting_evidence, text_evidence
from pipeline.verify.perturbations import is_free_text
from tests.verify.builders import package


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
    ("pg_dump --host prod-db.internal --out s3://backups/prod/", "action", False),  # a command line
    ("python manage.py migrate --noinput", "action", False),
    ("rsync -a /data /backup", "command", False),
    ("Please see https://status.example/inc-41 for the details", "body", True),  # a link in prose
    ("PO-4411 / 40 vertical mice", "subject", True),
    ("Restart the nginx service on web-01", "action", True),
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


@pytest.mark.parametrize(("text", "minutes"), [
    ("An hour later", {60}), ("One minute early", {1}), ("Half an hour before", {30}), ("in 2 Hours", {120}),
    ("a 30 min slot", {30}), ("with each month", set()),
])
def test_durations_are_read_whatever_their_case(text: str, minutes: set[int]) -> None:
    assert set(text_evidence(text, date(2026, 12, 1)).durations) == minutes


def test_texts_inside_results_are_read_when_a_question_needs_them() -> None:
    """Evidence asks the values it has first and reads the texts of results only when they could
    turn a "no" into a "yes": the answers are those of reading everything at once."""
    result = {"notes": [{"id": "note-001", "title": "Launch checklist", "body": "Ship on 2026-12-09 at 14:00, "
                         "three reviewers, contact ops@example.com, 45 minutes before the demo"},
                        {"id": "note-002", "title": "Budget", "body": "Spend 1,250.50 over two weeks", "amount": 12}]}
    today = date(2026, 12, 1)
    lazy, eager = Evidence(), Evidence()
    lazy.read_value(result, today)
    eager.read_value(result, today)
    eager._read_texts()
    assert lazy.texts and not eager.texts
    assert lazy.has_number(12.0) and lazy.has_token("launch checklist") and lazy.texts  # answered unread
    questions = [("has_day", "2026-12-09"), ("has_day", "2026-12-10"), ("has_time", "14:00"), ("has_time", "13:15"),
                 ("has_time", "13:16"), ("has_token", "ops@example.com"), ("has_token", "nobody@example.com"),
                 ("has_number", 3.0), ("has_number", 1250.5), ("has_number", 24.0), ("has_number", 7.77)]
    assert [getattr(lazy, q)(v) for q, v in questions] == [getattr(eager, q)(v) for q, v in questions] == [
        True, False, True, True, False, True, False, True, True, True, False]
    assert lazy.all_numbers() == eager.all_numbers()


def test_a_range_of_days_the_request_allows_makes_its_days_known() -> None:
    """"Any afternoon wed-fri this week" (sent on Tuesday 1 December): Wednesday the 2nd to Friday
    the 4th are the agent's to pick, so a date among them is no value it could not know."""
    event = {"title": "Q1 planning prep", "start": "2026-12-02T13:00", "duration_minutes": 120}
    doc = package("Need 2 hrs blocked for Q1 planning prep. Any afternoon wed-fri this week is fine.",
                  {"calendar": {"events": []}}, ["calendar_create_event"],
                  [{"id": "made", "kind": "state_count", "weight": 1.0, "collection": "calendar.events",
                    "scope": "created", "op": "==", "value": 1, "where": event}],
                  [{"call": "calendar_create_event", "args": event}, {"answer": "Blocked."}])
    doc["now"] = "2026-12-01T09:00:00Z"
    evidence = starting_evidence(load_package(doc))
    assert evidence.has_day("2026-12-02") and evidence.has_day("2026-12-04")
    assert not evidence.has_day("2026-12-07")
