"""What a request reads apart (exclusions, names holding numbers), the ranges it allows (dates,
clock times, numbers; free inside or only bounded), the spans of days it states, and clock times
said in words (pipeline/core/text_values.py)."""

from __future__ import annotations

from datetime import date

import pytest

from pipeline.core import text_values as tv
from pipeline.core.text_values import Allowed

TODAY = date(2026, 12, 1)  # a Tuesday: "next week" is Monday 7 to Sunday 13 December


def spanned(text: str, spans: tuple[tuple[int, int], ...]) -> list[str]:
    return [text[a:b] for a, b in spans]


# --------------------------------------------------------------------------- exclusions


@pytest.mark.parametrize(("text", "left_out"), [
    ("Message everyone in Finance except Omar Haddad.", [" Omar Haddad"]),
    ("Invite all but Omar Reyes, and book the room", [" Omar Reyes"]),
    ("Close every resolved ticket apart from the Brightline ones, and reply to Ana.", [" the Brightline ones"]),
    ("Email everyone except Rosa then file it", [" Rosa"]),
    ("Skip Rosa; send the rest", [" Rosa"]),
    ("Invite the team but not Omar Reyes, then book the room.", [" Omar Reyes"]),
    ("Send the invoice to Omar Haddad.", []),
    ("Remind them what they owe - leave the sound mix invoice out of it.", [" the sound mix invoice out of it"]),
    ("Total the unpaid ones but leave Brightline out, then email Ana.", [" Brightline out"]),
    ("Leave a note for Ana and close the ticket.", []),
    ("Cancel this month's lessons. Keep the one on the 10th though, it moved.", [" the one on the 10th"]),
    ("Cancel the Harbour bookings. Leave the Friday one alone.", [" the Friday one"]),
    ("Archive the threads but leave The Margin Letter where it is.", [" The Margin Letter"]),
    ("Send the report to all managers. Keep the Leeds office in the loop.", []),   # no "though", "alone" …
    ("Keep it short and send it today.", []),
    ("Archive the 2025 page (don't delete anything) and publish the 2026 one.", [" anything"]),  # up to a bracket
    ("leave out the disputed one (inv-093), that's with legal", [" the disputed one (inv-093"]),  # which it closes
])
def test_excluded_spans_run_to_the_end_of_the_clause(text: str, left_out: list[str]) -> None:
    assert spanned(text, tv.excluded_spans(text)) == left_out


def test_within_is_half_open() -> None:
    spans = ((3, 7),)
    assert [tv.within(spans, at) for at in (2, 3, 6, 7)] == [False, True, True, False]
    assert not tv.within((), 0)


# --------------------------------------------------------------------------- names that hold numbers


@pytest.mark.parametrize(("text", "names"), [
    ('Put it in the "Q3 plan" folder', ['"Q3 plan"', "Q3"]),
    ("Move the Archive 2026 folder", ["Archive 2026"]),
    ("Book Room 101 for 3 people", ["Room 101"]),
    ("Put 3 chairs in Floor 7 lounge", ["Floor 7"]),
    ("Order 40 X200 headsets for Q3", ["X200", "Q3"]),
    ("Send Omar 3 reminders", []),            # a plural noun follows: a quantity, not a name
    ("Book Room 4 chairs", []),
    ("Ship to Texas and Ohio 5 units", []),
    ("Room 101 is free", []),                 # a capitalized word must sit inside a sentence
])
def test_name_spans_of_names_holding_numbers(text: str, names: list[str]) -> None:
    assert spanned(text, tv.name_spans(text)) == names


def test_name_spans_finds_the_state_s_names_in_any_case() -> None:
    text = "file it under route 66 diner, then route 66 diner again"
    spans = tv.name_spans(text, ("Route 66 Diner",))
    assert spans == ((14, 28), (35, 49))
    assert spanned(text, spans) == ["route 66 diner", "route 66 diner"]
    assert tv.name_spans(text) == ()


# --------------------------------------------------------------------------- allowed ranges


@pytest.mark.parametrize(("text", "allowed"), [
    ("Any weekday next week works.", [Allowed("date", "2026-12-07", "2026-12-13", True, True)]),
    ("Sometime next week.", [Allowed("date", "2026-12-07", "2026-12-13", True, False)]),
    ("next week", [Allowed("date", "2026-12-07", "2026-12-13", False, False)]),
    ("by Friday", [Allowed("date", "2026-12-01", "2026-12-04", False, False)]),
    ("Pick a day from 2026-12-07 to 2026-12-11", [Allowed("date", "2026-12-07", "2026-12-11", True, False)]),
    ("2026-12-07 to 2026-12-11, weekdays only", [Allowed("date", "2026-12-07", "2026-12-11", True, True)]),
    ("between the 7th and the 9th", [Allowed("date", "2026-12-07", "2026-12-09", True, False)]),
    ("between the 9th and the 7th", []),  # the wrong way round: no range
    ("between 08:00 and 10:30", [Allowed("time", "08:00", "10:30", True)]),
    ("between 8 am and 10:30 am", [Allowed("time", "08:00", "10:30", True)]),
    ("before 10:00", [Allowed("time", None, "10:00", True)]),
    ("no later than 5 pm", [Allowed("time", None, "17:00", True)]),
    ("by noon", [Allowed("time", None, "12:00", True)]),
    ("after 2 pm", [Allowed("time", "14:00", None, True)]),
    ("no earlier than 9", [Allowed("time", "09:00", None, True)]),
    ("one or two", [Allowed("number", 1.0, 2.0, True)]),
    ("Ship 2 or 3 pallets", [Allowed("number", 2.0, 3.0, True)]),
    ("Order 5 or 50 pens", []),  # too far apart to be a range
    ("at least 20", [Allowed("number", 20.0, None, True)]),
    ("up to 5", [Allowed("number", None, 5.0, True)]),
    ("no more than 3 reminders", [Allowed("number", None, 3.0, True)]),
    ("at most five", [Allowed("number", None, 5.0, True)]),
    ("between 10 and 15", [Allowed("number", 10.0, 15.0, True)]),
    ("Send Omar 3 reminders", []),
    ("Get the docks back up to 60 units.", []),  # a level to reach, no bound on the order
    ("Top it up to 40 boxes", []),
    ("Bump their reorder level up to forty, would you?", []),
    ("Move the card limit up to 500.", []),
    ("Book up to 4 rooms", [Allowed("number", None, 4.0, True)]),
    ("Take up to 5 boxes, set up to 3 reminders", [Allowed("number", None, 5.0, True), Allowed("number", None, 3.0, True)]),
    ("Raise the budget by up to 10 percent", [Allowed("number", None, 10.0, True)]),
    ("Email the shortfall report every Monday morning.", [Allowed("time", "06:00", "12:00", True)]),
    ("Put it in some afternoon next week", [Allowed("date", "2026-12-07", "2026-12-13", True, False),
                                            Allowed("time", "12:00", "17:00", True)]),
    ("Remind me tomorrow evening, please", [Allowed("time", "17:00", "21:00", True)]),
    ("Run it on Friday mornings.", [Allowed("time", "06:00", "12:00", True)]),
    ("Book it Monday morning at 9.", []),                        # the sentence gives the time itself
    ("Book it Monday morning, around ten", []),
    ("Run it every Monday at half past eight in the morning.", []),
    ("Put it in Thursday afternoon? Any start from 1 to 3pm is fine.", []),   # a time stated anywhere
    ("Tuesday morning works. Keep it under 30 minutes.", [Allowed("time", "06:00", "12:00", True)]),  # another sentence
    ("Good morning! Please close the ticket.", []),             # a greeting names no part of a day
    ("Back up the bookings database every night.", [Allowed("time", "22:00", "23:59", True),
                                                     Allowed("time", "00:00", "05:00", True)]),  # either side of midnight
    ("Add a nightly export of the orders.", [Allowed("time", "22:00", "23:59", True), Allowed("time", "00:00", "05:00", True)]),
    ("Good night, and thanks!", []), ("Update the night shift rota.", []),
    ("Book the call with Ana at lunchtime on Friday", [Allowed("time", "12:00", "14:00", True)]),
    ("Send it first thing tomorrow", [Allowed("time", "07:00", "10:00", True)]),
    ("Book it first thing Monday.", [Allowed("time", "07:00", "10:00", True)]),
    ("The first thing to do is close the ticket", []),            # no day after it: an order of work
    ("the morning shift rota", []),
])
def test_allowed_ranges(text: str, allowed: list[Allowed]) -> None:
    assert list(tv.allowed_ranges(text, TODAY)) == allowed


@pytest.mark.parametrize("text", ["Order 40 to 60 rolls", "Order anywhere from 40 to 60 rolls", "Order 40-60 rolls"])
def test_a_plain_number_span_is_a_range(text: str) -> None:
    """equivalence._other_choice names "40 to 60 rolls" as a range the request leaves open."""
    assert list(tv.allowed_ranges(text, TODAY)) == [Allowed("number", 40.0, 60.0, True)]
    assert list(tv.allowed_ranges("Order 60 to 40 rolls", TODAY)) == []


def test_a_weekdays_only_range_holds_no_weekend_day() -> None:
    week = Allowed("date", "2026-12-07", "2026-12-13", True, True)
    assert [week.holds(d) for d in ("2026-12-06", "2026-12-07", "2026-12-11", "2026-12-12", "2026-12-14")] == [
        False, True, True, False, False]
    assert Allowed("date", "2026-12-07", "2026-12-13", True, False).holds("2026-12-12")


def test_range_of_reads_a_value_by_kind() -> None:
    weekdays = tv.allowed_ranges("Any weekday next week works.", TODAY)
    assert tv.range_of("2026-12-08T10:00", weekdays) == weekdays[0]  # a date-time by its day
    assert tv.range_of("2026-12-12", weekdays) is None                # a Saturday
    assert tv.range_of("2026-12-14", weekdays) is None
    morning = tv.allowed_ranges("between 08:00 and 10:30", TODAY)
    assert tv.range_of("2026-12-08T09:15", morning) == morning[0]   # a date-time by its clock
    assert tv.range_of("10:30", morning) == morning[0]              # the ends are inside
    assert tv.range_of("10:31", morning) is None
    assert tv.range_of(9, morning) is None                           # a number is no time
    boxes = tv.allowed_ranges("between 10 and 15 boxes", TODAY)
    assert [tv.range_of(v, boxes) for v in (12, 12.5, 16, True, "12")] == [boxes[0], boxes[0], None, None, None]


def test_clock_of_reads_a_time_a_date_time_and_a_schedule() -> None:
    assert [tv.clock_of(v) for v in ("9:30", "2026-12-07T14:05", "2026-12-07T14:05:00", "0 7 * * 1",
                                     "30 14 * * 1-5", "2026-12-07", "0 25 * * 1", 7, "*/15 * * * *")] == [
        "09:30", "14:05", "14:05", "07:00", "14:30", None, None, None, None]
    assert tv.at_clock("0 7 * * 1", "11:45") == "45 11 * * 1"
    assert tv.at_clock("2026-12-07T14:05:00", "09:00") == "2026-12-07T09:00:00"
    assert tv.at_clock("14:05", "09:00") == "09:00"


def test_a_schedule_s_time_of_day_is_held_by_a_part_of_the_day() -> None:
    morning = tv.allowed_ranges("every Monday morning", TODAY)
    assert tv.range_of("0 7 * * 1", morning) == morning[0]
    assert tv.range_of("0 13 * * 1", morning) is None


def test_range_of_flexible_only_skips_a_range_that_only_bounds() -> None:
    bounded = tv.allowed_ranges("next week", TODAY)
    assert tv.range_of("2026-12-08", bounded) == bounded[0]
    assert tv.range_of("2026-12-08", bounded, flexible_only=True) is None
    free = tv.allowed_ranges("Any day next week works", TODAY)
    assert tv.range_of("2026-12-08", free, flexible_only=True) == free[0]


# --------------------------------------------------------------------------- spans of days


@pytest.mark.parametrize(("text", "spans"), [
    ("due two days after the vendor meeting", {(2, False)}),
    ("due one week before the renewal date", {(7, False)}),
    ("a week before", {(7, False)}),
    ("within 3 working days", {(3, True)}),
    ("ten business days", {(10, True)}),
    ("2 weeks", {(14, False)}),
    ("a fortnight", {(14, False)}),
    ("the day before", {(1, False)}),
    ("a day later", {(1, False)}),
    ("two days after, and 3 working days later", {(2, False), (3, True)}),
    ("today", set()),
    ("Book the venue", set()),
])
def test_day_spans(text: str, spans: set[tuple[int, bool]]) -> None:
    assert tv.day_spans(text) == frozenset(spans)


@pytest.mark.parametrize(("day", "days", "working", "moved"), [
    ("2026-12-01", 7, False, "2026-12-08"),
    ("2026-12-10", -7, False, "2026-12-03"),
    ("2026-12-04", 3, False, "2026-12-07"),
    ("2026-12-04", 1, True, "2026-12-07"),     # Friday + 1 working day: Monday
    ("2026-12-11", 1, True, "2026-12-14"),
    ("2026-12-07", -1, True, "2026-12-04"),    # Monday − 1 working day: Friday
    ("2026-12-14", -1, True, "2026-12-11"),
    ("2026-12-01", 10, True, "2026-12-15"),
    ("2026-12-07T10:00", 5, True, "2026-12-14"),  # a date-time moves by its day
])
def test_shifted(day: str, days: int, working: bool, moved: str) -> None:
    assert tv.shifted(day, days, working) == moved


# --------------------------------------------------------------------------- clock times in words


@pytest.mark.parametrize(("text", "clock"), [
    ("half past two", "14:30"),          # 1 to 6 without am/pm: the afternoon
    ("at half past two", "14:30"),
    ("Half Past Two PM", "14:30"),
    ("quarter to three pm", "14:45"),
    ("quarter past 9", "09:15"),
    ("half past 9 am", "09:30"),
    ("half past ten pm", "22:30"),
    ("quarter past twelve", "12:15"),
    ("quarter to one", "12:45"),
    ("quarter to 1 am", "00:45"),
])
def test_times_in_reads_half_and_quarter(text: str, clock: str) -> None:
    found = tv.times_in(text)
    assert [m.value for m in found] == [clock]
    assert found[0].kind == "time" and text[found[0].start:found[0].end] == found[0].text


def test_times_in_half_past_keeps_its_span() -> None:
    (m,) = tv.times_in("The retro is at half past two.")
    assert (m.start, m.end, m.text) == (16, 29, "half past two")


def test_no_time_in_half_or_quarter_alone() -> None:
    assert tv.times_in("half the team, a quarter of the budget") == ()


@pytest.mark.parametrize(("text", "clocks"), [
    ("3-4pm", ["15:00", "16:00"]),              # the end's pm is the start's too
    ("from 3 to 4 pm", ["15:00", "16:00"]),
    ("9-10:30am", ["09:00", "10:30"]),
    ("between 2 and 3pm", ["14:00", "15:00"]),
    ("11-1pm", ["11:00", "13:00"]),             # a start after its end is the morning's
    ("11-12pm", ["11:00", "12:00"]),
    ("3:30-4:30pm", ["15:30", "16:30"]),
    ("3pm-4pm", ["15:00", "16:00"]),
    ("items 2 and 3pm", ["15:00"]),             # "and" joins a range only after "between"
    ("11-12", []),                              # no am or pm: no time
])
def test_times_in_reads_a_range_with_one_am_or_pm(text: str, clocks: list[str]) -> None:
    found = tv.times_in(text)
    assert [m.value for m in found] == clocks
    assert all(text[m.start:m.end] == m.text for m in found)


# --------------------------------------------------------------------------- spans of weekdays
@pytest.mark.parametrize(("text", "low", "high"), [
    ("sometime tue-thu next week, mornings only", "2026-12-08", "2026-12-10"),
    ("Tuesday to Thursday next week", "2026-12-08", "2026-12-10"),
    ("between Tuesday and Thursday of next week", "2026-12-08", "2026-12-10"),
    ("wed–fri this week", "2026-12-02", "2026-12-04"),  # from today on
    ("any time Mon to Wed", "2026-12-01", "2026-12-02"),  # the span this week still holds
    ("Thu through Fri", "2026-12-03", "2026-12-04"),
    ("thu or fri this week, after lunch", "2026-12-03", "2026-12-04"),  # two days in a row
])
def test_a_span_of_weekday_names_allows_its_days(text: str, low: str, high: str) -> None:
    assert Allowed("date", low, high, True) in tv.allowed_ranges(text, TODAY)


@pytest.mark.parametrize("text", ["on Tuesday and Thursday", "call Tom to fix it", "sat and sun", "mon or fri"])
def test_two_named_days_without_a_span_allow_no_range(text: str) -> None:
    assert not [r for r in tv.allowed_ranges(text, TODAY) if r.kind == "date"]


def test_a_span_of_weekdays_after_the_week_it_names_is_of_that_week() -> None:
    """"next week, Tuesday through Thursday" is 8–10 December (today is Tuesday 1 December), and a
    value both ranges hold is read by the narrower one."""
    said = "a 45-min catch-up some morning next week, Tuesday through Thursday, any start between 9 and 11"
    ranges = tv.allowed_ranges(said, date(2026, 12, 1))
    span = Allowed("date", "2026-12-08", "2026-12-10", True, False)
    assert span in ranges and Allowed("date", "2026-12-07", "2026-12-13", True, False) in ranges
    assert tv.range_of("2026-12-09T10:00", ranges) == span
    assert tv.range_of("2026-12-11T10:00", ranges) == Allowed("date", "2026-12-07", "2026-12-13", True, False)
    assert Allowed("date", "2026-12-01", "2026-12-03", True, False) not in ranges  # not this week's


def test_days_listed_as_options_allow_the_days_they_list() -> None:
    """"next week. Any of Tuesday, Wednesday or Thursday is fine": the week of the sentence before,
    and, the days in a row, any of them; days not in a row allow each alone, none between them."""
    listed = tv.allowed_ranges("Book the review next week. Any of Tuesday, Wednesday or Thursday is fine.", TODAY)
    assert Allowed("date", "2026-12-08", "2026-12-10", True, False) in listed
    assert tv.range_of("2026-12-09T14:00", listed) in (Allowed("date", "2026-12-08", "2026-12-10", True, False),
                                                      Allowed("date", "2026-12-09", "2026-12-10", True, False))
    apart = tv.allowed_ranges("Book it next week: Monday, Wednesday or Friday works.", TODAY)
    assert tv.range_of("2026-12-09", apart) == Allowed("date", "2026-12-09", "2026-12-09", True, False)
    assert Allowed("date", "2026-12-07", "2026-12-11", True, False) not in apart


@pytest.mark.parametrize("text", ["The gym is open on Monday, Wednesday and Friday next week.",
                                  "We meet Monday, Tuesday and Wednesday next week."])
def test_days_listed_with_and_are_every_one_of_them_not_a_choice(text: str) -> None:
    """The list read with "and" allows nothing the same list with "or" does not allow besides."""
    assert not [r for r in tv.allowed_ranges(text, TODAY) if r.kind == "date" and r.low == "2026-12-07"]
    assert [r for r in tv.allowed_ranges(text.replace(" and ", " or "), TODAY) if r.kind == "date" and r.low == "2026-12-07"]
