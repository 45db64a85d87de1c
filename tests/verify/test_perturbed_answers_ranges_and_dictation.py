"""Wrong and correct values (pipeline/verify/perturbations.py): a hedged answer, a
fact said in words guessed in the form a tool takes, values inside and just past an allowed range,
alternatives moved out of a range the request leaves open, what a request dictates of a text, and
swapping only that."""

from __future__ import annotations

import copy
from datetime import date
from typing import Any

import pytest

from pipeline.core.package import TaskPackage, load_package
from pipeline.core.text_values import Allowed, allowed_ranges
from pipeline.verify.perturbations import (
    MAX_HEDGES,
    Alternatives,
    Dictated,
    _swap,
    dictated_content,
    hedged_answer,
    in_written_form,
    inside,
    past_range,
)
from tests.conftest import _TODO_PACKAGE

TODAY = date(2026, 12, 1)


def package(request: str) -> TaskPackage:
    doc = copy.deepcopy(_TODO_PACKAGE)
    doc["request"]["text"] = request
    return load_package(doc)


# --------------------------------------------------------------------------- hedged answers

INVOICES = [{"id": "inv-1041", "customer": "Corvid", "status": "paid", "amount": 100.0},
            {"id": "inv-1043", "customer": "Corvid", "status": "unpaid", "amount": 250.0},
            {"id": "inv-1047", "customer": "Corvid", "status": "paid", "amount": 80.0}]
TICKETS = [{"id": "tkt-a", "customer": "Kestrel", "status": "open"}, {"id": "tkt-b", "customer": "Kestrel", "status": "open"},
           {"id": "tkt-c", "customer": "Kestrel", "status": "closed"}]


@pytest.mark.parametrize(("answer", "graded", "lists", "told", "written", "hedged"), [
    ("The unpaid invoice is inv-1043.", ["inv-1043"], [INVOICES], "Which Corvid invoice is unpaid?", set(),
     "The unpaid invoice is inv-1043. Or possibly: inv-1041, inv-1047."),
    ("Status is paid", ["paid"], [INVOICES], "What is it?", set(), "Status is paid Or possibly: unpaid."),
    ("Kestrel has 2 open tickets.", ["2"], [TICKETS], "How many open tickets does Kestrel have?", set(),
     "Kestrel has 2 open tickets. Or possibly: 1, 3."),            # a count it works out: one less, one more
    ("Kestrel has 2 open tickets.", ["2 open"], [TICKETS], "How many open tickets?", set(),
     "Kestrel has 2 open tickets. Or possibly: 1, 3."),
    ("It is inv-1043, or inv-1041.", ["inv-1043"], [INVOICES], "Which one?", set(),
     "It is inv-1043, or inv-1041. Or possibly: inv-1047."),       # what the answer already says is no hedge
    ("Kestrel has 3 open: tkt-141, tkt-142, tkt-143.", ["3"], [TICKETS], "How many open tickets?", set(),
     "Kestrel has 3 open: tkt-141, tkt-142, tkt-143. Or possibly: 2, 4."),  # "2" is no word of "tkt-142"
])
def test_hedged_answer(answer: str, graded: list[str], lists: list[list[dict[str, Any]]], told: str,
                       written: set[str], hedged: str) -> None:
    assert hedged_answer(answer, graded, lists, told, written) == hedged


STOCK = [{"id": i, "name": name, "category": category, "quantity": q, "price": p}
         for i, name, category, q, p in (("p1", "M8 bolt", "Fasteners", 400, 0.12), ("p2", "M6 nut", "Fasteners", 1200, 0.05),
                                         ("p3", "Wall anchor", "Fasteners", 150, 0.4),
                                         ("p4", "Screws (bulk bin)", "Fasteners (bulk)", 5000, 0.03))]


def test_a_stock_worth_is_hedged_with_the_worth_of_more_records() -> None:
    """The Fasteners are worth 168.00 (48 + 60 + 60); a careless agent offers the worth with the
    bulk bin the request books separately (318.00) beside it, not a smaller subset's."""
    answer = "Fasteners are worth 168.00."
    hedge = hedged_answer(answer, ["168.00"], [STOCK], "what is the Fasteners stock worth? the bulk bin is separate",
                          set())
    assert hedge is not None and hedge.startswith(answer + " Or possibly: 318.00")


INVOICE_ANSWER = "The unpaid one is inv-1043."
COUNT_ANSWER = "Kestrel has 2 open tickets."


@pytest.mark.parametrize(("answer", "graded", "lists", "told", "written"), [
    (INVOICE_ANSWER, ["inv-1043"], [INVOICES], "Is inv-1043 unpaid?", set()),     # the request says it
    (INVOICE_ANSWER, ["inv-1043"], [INVOICES], "Which one?", {"inv-1043"}),       # a record written to
    (INVOICE_ANSWER, ["inv-1043"], [INVOICES], "Which one?", {"Paid inv-1043"}),  # what it wrote, texts included
    (COUNT_ANSWER, ["2"], [TICKETS], "Does Kestrel have 2 open tickets?", set()),  # a count the request states
    (COUNT_ANSWER, ["2"], [TICKETS], "Which one?", {"2"}),                        # a count the agent wrote
])
def test_what_the_answer_confirms_is_not_hedged(answer: str, graded: list[str], lists: list[list[dict[str, Any]]],
                                                told: str, written: set[str]) -> None:
    assert hedged_answer(answer, graded, lists, told, written) is None
    assert hedged_answer(answer, graded, lists, "Which one?", set()) is not None  # what it would be hedged with


@pytest.mark.parametrize(("graded", "lists"), [
    (["2"], [[{"id": "tkt-a", "open": 2}, {"id": "tkt-b", "open": 5}]]),  # a record holds the number: no count
    (["Done"], [INVOICES, TICKETS]),                                      # no record holds it, no count in it
])
def test_nothing_to_hedge(graded: list[str], lists: list[list[dict[str, Any]]]) -> None:
    assert hedged_answer(COUNT_ANSWER + " Done", graded, lists, "How many?", set()) is None


def test_at_most_max_hedges() -> None:
    people = [{"id": f"x-{i}", "name": f"Person {chr(65 + i)}"} for i in range(12)]
    hedged = hedged_answer("It is Person A.", ["Person A"], [people], "Who?", set())
    assert hedged == "It is Person A. Or possibly: " + ", ".join(f"Person {c}" for c in "BCDEFGHI") + "."
    assert MAX_HEDGES == 8


def test_a_count_is_hedged_though_an_id_holds_its_digit() -> None:
    tickets = [{"id": f"tkt-20{n}", "customer": "Kestrel", "status": s} for n, s in ((1, "open"), (2, "open"), (3, "closed"))]
    assert hedged_answer("Kestrel has 2 open tickets.", ["2"], [tickets], "How many open tickets does Kestrel have?",
                         set()) == "Kestrel has 2 open tickets. Or possibly: 1, 3."


# --------------------------------------------------------------------------- facts said in words


@pytest.mark.parametrize(("value", "guess", "turned"), [
    ("2,600 EUR", "2,800 EUR", [2800, 2800.0, "14:30", "2026-12-09", "2026-12-09T14:30", 12, "x", True]),
    ("half past two", "half past three", [2600, 2600.0, "15:30", "2026-12-09", "2026-12-09T15:30", 12, "x", True]),
    ("the 9th", "the 10th", [2600, 2600.0, "14:30", "2026-12-10", "2026-12-10T14:30", 12, "x", True]),
    ("twelve", "ten", [2600, 2600.0, "14:30", "2026-12-09", "2026-12-09T14:30", 10, "x", True]),
    ("2 600", "2 800", [2800, 2800.0, "14:30", "2026-12-09", "2026-12-09T14:30", 12, "x", True]),  # French thousands
    ("2\u202f600 €", "2\u202f800 €", [2800, 2800.0, "14:30", "2026-12-09", "2026-12-09T14:30", 12, "x", True]),
])
def test_in_written_form_turns_the_tool_form_of_the_value_into_the_guess(value: str, guess: str, turned: list[Any]) -> None:
    replace = in_written_form(value, guess, TODAY)
    assert replace is not None
    arguments = [2600, 2600.0, "14:30", "2026-12-09", "2026-12-09T14:30", 12, "x", True]
    assert [replace(a) for a in arguments] == turned
    assert [type(replace(a)) for a in arguments] == [type(t) for t in turned]


def test_a_time_said_is_turned_in_a_schedule_that_runs_at_it() -> None:
    """A scheduler takes the time of day as cron's minute and hour: an agent that never asked
    writes its guess there too."""
    replace = in_written_form("03:30", "16:30", TODAY)
    assert replace is not None
    assert [replace(a) for a in ("30 3 * * *", " 30 03 * * 1-5", "15 3 * * *", "*/5 3 * * *", "30 3 * *")] == \
        ["30 16 * * *", " 30 16 * * 1-5", "15 3 * * *", "*/5 3 * * *", "30 3 * *"]


@pytest.mark.parametrize(("value", "guess"), [("blue", "red"), ("12", "12"), ("the 9th or the 10th", "the 11th")])
def test_in_written_form_is_none_without_one_value_that_changes(value: str, guess: str) -> None:
    assert in_written_form(value, guess, TODAY) is None


# --------------------------------------------------------------------------- inside and past a range

WEEKDAYS_NEXT_WEEK = Allowed("date", "2026-12-07", "2026-12-13", True, True)
NEXT_WEEK = Allowed("date", "2026-12-07", "2026-12-13", False)
MORNING = Allowed("time", "08:00", "10:30", True)
ONE_OR_TWO = Allowed("number", 1.0, 2.0, True)
AT_LEAST_20 = Allowed("number", 20.0, None, True)
UP_TO_5 = Allowed("number", None, 5.0, True)


@pytest.mark.parametrize(("value", "allowed", "other"), [
    ("2026-12-08", WEEKDAYS_NEXT_WEEK, "2026-12-11"),          # the last weekday
    ("2026-12-11", WEEKDAYS_NEXT_WEEK, "2026-12-10"),          # the last one but the value
    ("2026-12-08T09:00", WEEKDAYS_NEXT_WEEK, "2026-12-11T09:00"),
    ("09:00", MORNING, "10:15"),                               # a quarter inside the far end
    ("10:15", MORNING, "08:15"),
    ("2026-12-08T08:15", MORNING, "2026-12-08T10:15"),
    (1, ONE_OR_TWO, 2),
    (2, ONE_OR_TWO, 1),
    (1.5, ONE_OR_TWO, 2.0),
    (25, AT_LEAST_20, 26),
    (3, UP_TO_5, 2),
    (1, UP_TO_5, None),                                        # nothing below one
    ("2026-12-08", Allowed("date", None, "2026-12-13", False), None),
    ("0 7 * * 1", Allowed("time", "06:00", "12:00", True), "45 11 * * 1"),  # a schedule's time of day
])
def test_inside(value: Any, allowed: Allowed, other: Any) -> None:
    assert inside(value, allowed) == other


@pytest.mark.parametrize(("value", "ranges", "past"), [
    ("2026-12-08", [WEEKDAYS_NEXT_WEEK], "2026-12-12"),        # a weekend day inside a weekdays-only range first
    ("2026-12-08T09:00", [WEEKDAYS_NEXT_WEEK], "2026-12-12T09:00"),
    ("2026-12-08", [NEXT_WEEK], "2026-12-14"),                 # the day after
    ("2026-12-08", [Allowed("date", "2026-12-07", None, False)], "2026-12-06"),  # the day before an open end
    ("09:00", [MORNING], "11:30"),                             # an hour after
    ("2026-12-08T09:00", [MORNING], "2026-12-08T11:30"),
    ("30 9 * * 1-5", [MORNING], "30 11 * * 1-5"),
    ("11:00", [Allowed("time", "10:00", None, True)], "09:00"),
    (1, [ONE_OR_TWO], 3),
    (1.5, [ONE_OR_TWO], 3.0),
    (25, [AT_LEAST_20], 19),
    (3, [UP_TO_5], 6),
    (3, [Allowed("number", 0.0, None, True)], None),           # nothing below zero
])
def test_past_range(value: Any, ranges: list[Allowed], past: Any) -> None:
    found = past_range(value, ranges)
    assert found == past and type(found) is type(past)


def test_past_range_is_past_every_range_that_holds_the_value() -> None:
    assert past_range(12, [Allowed("number", 10.0, 15.0, True), Allowed("number", None, 20.0, True)]) == 21


# --------------------------------------------------------------------------- alternatives out of an allowed range


@pytest.mark.parametrize(("request_text", "value", "alternatives"), [
    ("Order 1 or 2 boxes.", 1, [3, 10]),                      # 2 is allowed: moved past the range
    ("Order 1 or 2 boxes.", 2, [3, 20]),
    ("Order at least 20 boxes.", 20, [19]),                   # 21 and 200 are allowed: one below instead
    ("Order up to 5 boxes.", 5, [6, 50]),
    ("Order up to 5 boxes.", 1, [6]),                         # a value the range holds moves past it
    ("Order between 10 and 15 boxes.", 10, [16, 100]),
    ("Order between 10 and 15 boxes.", 12, [16]),
    ("Book the venue any weekday next week.", "2026-12-08", ["2026-12-12"]),
    ("Book the venue between 08:00 and 10:30.", "10:30", ["11:30"]),
    ("Book the venue on 2026-12-08.", "2026-12-08", ["2026-12-09"]),  # no range: a day later
])
def test_alternatives_leave_the_range_the_request_allows(request_text: str, value: Any, alternatives: list[Any]) -> None:
    assert Alternatives(package(request_text))(value, None) == alternatives


def test_a_stated_date_is_still_moved_when_only_the_time_is_free() -> None:
    found = Alternatives(package("Book the venue on 2026-12-08, between 08:00 and 10:30."))("2026-12-08T09:00", None)
    assert "2026-12-09T09:00" in found


def test_the_ranges_alternatives_read_are_the_request_s() -> None:
    p = package("Order 1 or 2 boxes.")
    assert allowed_ranges(p.request_and_fact_values(), TODAY) == (ONE_OR_TWO,)


# --------------------------------------------------------------------------- what a request dictates

CALL_NOTE = ("Call with Omar 2026-12-01: launch approved for Tuesday 2026-12-08 at 15:00, 5 stores, not 6 stores, "
             "16:00 fallback")


def test_dictated_parts_today_dictates_no_date() -> None:
    p = package("Add a todo about today's call with Omar: he approved the launch on Tuesday 2026-12-08 at 15:00 "
                "for 5 stores.")
    parts = dictated_content(p, CALL_NOTE, set())
    assert parts == Dictated(dates=frozenset({"2026-12-08"}), times=frozenset({"15:00"}), numbers=frozenset({5.0}),
                             words=frozenset({"tuesday", "approved"}), content=("call", "launch", "stores"),
                             today=TODAY)
    assert parts.parts() == ["2026-12-08", "15:00", "5.0", "approved", "tuesday", "call", "launch", "stores"]


def test_a_date_the_request_writes_out_is_dictated_even_when_it_is_today() -> None:
    p = package("Add a todo about the 2026-12-01 call with Omar: he approved the launch on 2026-12-08.")
    assert dictated_content(p, CALL_NOTE, set()).dates == frozenset({"2026-12-01", "2026-12-08"})


def test_write_up_today_s_call_dictates_words_but_no_date() -> None:
    p = package("Add a todo to write up today's call.")
    parts = dictated_content(p, "Write up the call from 2026-12-01", set())
    assert parts.dates == frozenset() and parts.content == ("call", "write")
    assert dictated_content(p, "Write up the call from 2026-12-01", set()).parts() == ["call", "write"]


def test_a_couple_dictates_no_count_to_a_message() -> None:
    """"A couple of integrations are failing" says roughly how many; "two" says it exactly."""
    text = "Two integrations are in error: INT-001 and INT-003."
    assert dictated_content(package("A couple of integrations are failing. Notify ops listing which ones."),
                            text, set()).numbers == frozenset()
    assert dictated_content(package("Two integrations are failing. Notify ops listing which ones."),
                            text, set()).numbers == frozenset({2.0})


@pytest.mark.parametrize("purpose", ["so they can raise the PO", "so that purchasing can raise the PO",
                                     "in order to raise the PO"])
def test_a_verdict_word_of_a_clause_of_purpose_is_not_dictated(purpose: str) -> None:
    """What the reader of a message will do with it ("so they can raise the PO") is not what the
    message says: its verdict words are the agent's to word ("cut the PO" is as good)."""
    body = "Ordered 40 vertical mice from Kestrel Peripherals. Please raise the PO."
    told = package(f"Order forty vertical mice, then email purchasing the supplier's name {purpose}.")
    assert dictated_content(told, body, set()).words == frozenset()
    dictated = package("Order forty vertical mice, then email purchasing to raise the PO.")
    assert dictated_content(dictated, body, set()).words == frozenset({"raise"})


def test_a_quoted_phrase_is_dictated() -> None:
    p = package('Add a todo titled "Q3 plan review" for Friday.')
    assert dictated_content(p, "Q3 plan review", set()).phrases == ("Q3 plan review",)
    assert dictated_content(package("Add a todo."), "Q3 plan review", set()).parts() == []


def test_swap_only_the_dictated_parts() -> None:
    only = Dictated(dates=frozenset({"2026-12-08"}), times=frozenset({"15:00"}), numbers=frozenset({5.0}),
                    words=frozenset({"tuesday", "approved"}))
    # the sentence whose verdict flips loses its negations too: a writer saying the opposite says it throughout
    assert _swap(CALL_NOTE, only) == ("Call with Omar 2026-12-01: launch denied for Wednesday 2026-12-09 at 16:00, "
                                      "6 stores, 6 stores, 16:00 fallback")
    assert _swap(CALL_NOTE) == ("Call with Omar 2026-12-02: launch denied for Wednesday 2026-12-09 at 16:00, "
                                "6 stores, 7 stores, 17:00 fallback")


@pytest.mark.parametrize(("only", "swapped"), [
    (Dictated(times=frozenset({"15:00"})), "Moved to Tuesday 2026-12-08 at 16:00, 5 chairs, approved"),
    (Dictated(dates=frozenset({"2026-12-08"}), numbers=frozenset({5.0})),
     "Moved to Tuesday 2026-12-09 at 15:00, 6 chairs, approved"),
    (Dictated(words=frozenset({"tuesday", "approved"})), "Moved to Wednesday 2026-12-08 at 15:00, 5 chairs, denied"),
    (Dictated(), "Moved to Tuesday 2026-12-08 at 15:00, 5 chairs, approved"),
])
def test_swap_each_kind_only_when_dictated(only: Dictated, swapped: str) -> None:
    assert _swap("Moved to Tuesday 2026-12-08 at 15:00, 5 chairs, approved", only) == swapped


def test_swap_number_words_and_month_days_only_when_dictated() -> None:
    assert _swap("five chairs and two desks", Dictated(numbers=frozenset({2.0}))) == "five chairs and three desks"
    assert _swap("Due on Dec 9, not Dec 3", Dictated(dates=frozenset({"2026-12-09"}))) == "Due on Dec 10, not Dec 3"
