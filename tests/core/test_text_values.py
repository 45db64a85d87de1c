"""The text parsers skip a pattern when a cheap test shows the text cannot hold a match (no digit,
no month word, no weekday ...). Each skip must be exact: with every skip disabled the parsers find
the very same mentions, on the texts of generated packages and on texts chosen to break a skip."""

from __future__ import annotations

import re
from datetime import date
from functools import cache
from typing import Any
from unittest import mock

import pytest

from pipeline.core import text_values as tv
from pipeline.core.jsonvalues import strings
from pipeline.generation.offline import generate_package, pick_template
from pipeline.taxonomy.capabilities import taxonomy

TODAY = date(2026, 11, 30)
EDGE_CASES = [
    "", "   ", "Book it for Dec 3rd, then the 5th", "3 December or 4 dec.", "12/03 or 1/2/3", "THE 4TH OF JULY",
    "at 14:30 or 2 pm, noon at the latest", "twenty-five people, a dozen eggs, a couple of days",
    "Next MONDAY and this friday", "in three days, tomorrow, the day after tomorrow", "today", "in a fortnight",
    "two weeks from now, in a week",
    "no later than Friday, by 2026-12-04, before next week", "this month or next month",
    "ſix ſeats",  # a long s folds to "s" when a pattern ignores case: only the pattern may say
    "Kelvin: 5 K", "Ünïcode Montag 5. Dezember", "$4,000 and 12% or 1.5k", "todo-004 and c-101",
    "An hour later, One minute, half an hour, 2 Hours, 30min, anhour", "may 5 be", "may be",
    *(f"See you {day.title()}" for day in tv.WEEKDAYS), *(f"on {month.title()} 3" for month in tv.MONTHS),
    *(f"{word.title()} tickets" for word in tv.WORDS), "the 3rd", "by 2026-12-09", "until Friday",
    "due the ninth of December", "on March the twenty-first", "SEPT FIRST", "the first March invoice",
    "half six to half seven in the evening", "HALF 7 tonight", "half an hour", "half of them",
]


@cache
def _corpus() -> tuple[str, ...]:
    texts: list[str] = list(EDGE_CASES)
    for capability in taxonomy():
        for slot in range(6):
            package = generate_package(capability, pick_template(capability, slot), 3, slot)
            texts += [package.request.text, package.request_and_fact_values()]
            texts += strings(package.initial_state) + strings([s.model_dump() for s in package.reference])
    return tuple(dict.fromkeys(texts))


def _ungated(parse: Any, *args: Any) -> Any:
    """``parse`` (without its cache) with every skip disabled: each pattern runs on every text."""
    with (mock.patch.object(tv, "may_say", lambda text, words: True),
          mock.patch.object(tv, "_names_a_month", lambda text: True),
          mock.patch.object(tv, "_DIGIT", re.compile(""))):
        return parse.__wrapped__(*args)


@pytest.mark.parametrize("parse", [tv.numbers_in, tv.times_in])
def test_skipped_patterns_would_have_found_nothing(parse: Any) -> None:
    texts = _corpus()
    assert len(texts) > 500
    assert [parse.__wrapped__(t) for t in texts] == [_ungated(parse, t) for t in texts]


@pytest.mark.parametrize("parse", [tv.dates_in, tv.windows_in, tv.date_values])
def test_skipped_date_patterns_would_have_found_nothing(parse: Any) -> None:
    texts = _corpus()
    assert [parse.__wrapped__(t, TODAY) for t in texts] == [_ungated(parse, t, TODAY) for t in texts]


def test_the_skips_are_taken_and_do_not_hide_what_is_there() -> None:
    assert not tv.may_say("Book the venue", frozenset({"monday"}))
    assert tv.may_say("Book the venue on MONDAY", frozenset({"monday"}))
    assert tv.may_say("ſix", frozenset({"six"}))  # not ASCII: the pattern decides
    assert [m.value for m in tv.numbers_in("ſix seats")] == [6.0]
    assert [m.value for m in tv.dates_in("Dec. 4 or the 7th", TODAY)] == ["2026-12-04", "2026-12-07"]


@pytest.mark.parametrize(("text", "day"), [
    ("set up 45 min with tomas re the dock order this thu", "2026-12-03"),
    ("can we do thurs?", "2026-12-03"), ("due by fri", "2026-12-04"), ("next tue at 10", "2026-12-08"),
    ("on wed morning", "2026-12-02"), ("this sat", "2026-12-05"),
])
def test_a_weekday_by_its_short_name_is_a_date(text: str, day: str) -> None:
    """Requests written in a hurry name weekdays short ("this thu"); said on Tuesday 1 December."""
    assert day in tv.date_values(text, date(2026, 12, 1))


@pytest.mark.parametrize(("text", "day"), [
    ("closes end of jan", "2027-01-31"), ("due end of month", "2026-12-31"), ("by the end of the month", "2026-12-31"),
    ("end of next month", "2027-01-31"), ("end of March 2027", "2027-03-31"), ("end of sept", "2027-09-30"),
])
def test_the_end_of_a_month_is_its_last_day(text: str, day: str) -> None:
    """Said on Tuesday 1 December: a month before December is next year's."""
    assert tv.date_values(text, date(2026, 12, 1)) == {day}


def test_the_end_of_something_else_is_no_date() -> None:
    assert tv.date_values("at the end of the marketing push", date(2026, 12, 1)) == frozenset()


def test_a_weekday_before_the_date_it_falls_on_names_that_date_alone() -> None:
    """"Wednesday the 9th" is the 9th, not also the coming Wednesday (the 2nd); a weekday the date
    does not fall on stays a reading of its own. Said on Tuesday 1 December."""
    today = date(2026, 12, 1)
    said = "I'm off from Monday the 7th through Wednesday the 9th, cancel everything"
    assert tv.date_values(said, today) == {"2026-12-07", "2026-12-09"}
    assert [(r.low, r.high) for r in tv.allowed_ranges(said, today)] == [("2026-12-07", "2026-12-09")]
    assert tv.date_values("on Monday, December 7", today) == {"2026-12-07"}
    assert tv.date_values("Wednesday the 10th", today) == {"2026-12-02", "2026-12-10"}


@pytest.mark.parametrize("text", ["we sat down with the vendor", "the sun was out", "they wed in June", "mon ami"])
def test_short_names_that_are_words_need_this_next_or_on(text: str) -> None:
    assert not tv.date_values(text, date(2026, 12, 1))


@pytest.mark.parametrize(("text", "today", "month"), [
    ("submit last month's software subscriptions", date(2026, 12, 1), ("2026-11-01", "2026-11-30")),
    ("everything we spent this month", date(2026, 12, 1), ("2026-12-01", "2026-12-31")),
    ("book it for next month", date(2026, 12, 15), ("2027-01-01", "2027-01-31")),
    ("the previous month's invoices", date(2027, 1, 4), ("2026-12-01", "2026-12-31")),
    ("over the last month or so", date(2026, 12, 1), None),  # thirty days or so, no calendar month
])
def test_a_month_named_from_today_is_a_period(text: str, today: date, month: tuple[str, str] | None) -> None:
    found = [(p.low, p.high) for p in tv.periods_in(text, today)]
    assert found == ([month] if month else [])


@pytest.mark.parametrize(("text", "span"), [
    ("nobody's been in touch since October or earlier", (None, "2026-10-31")),
    ("anything dated October or before", (None, "2026-10-31")),
    ("orders from March onwards", ("2026-03-01", None)),
    ("contacted in October", ("2026-10-01", "2026-10-31")),
])
def test_a_month_open_at_one_end_is_a_period_open_there(text: str, span: tuple[str | None, str | None]) -> None:
    """Said on Tuesday 1 December: "October or earlier" runs up to October's last day."""
    assert [(p.low, p.high) for p in tv.periods_in(text, date(2026, 12, 1))] == [span]


@pytest.mark.parametrize(("text", "quoted"), [
    ("Next week I'm covering the desk, five in all, titled 'Check release dashboard', each", ["Check release dashboard"]),
    ("Rosa's ticket stays; close the one called 'Duplicate login'", ["Duplicate login"]),
    ("it’s the ‘Budget’ sheet", ["Budget"]),
    ('name it "Q1 plan"', ["Q1 plan"]),
    ("we're done with Kofi's list", []),
])
def test_an_apostrophe_between_letters_is_no_quote(text: str, quoted: list[str]) -> None:
    assert tv.quoted_phrases(text) == quoted
    assert [text[a:b].strip("'\"‘’“”") for a, b in tv.quoted_spans(text)] == quoted


@pytest.mark.parametrize(("text", "numbers"), [
    ("due fri 11 dec, three of them", [3.0]),      # a day of a month, whatever its case
    ("from nov 3 to 5 boxes", [5.0]),
    ("we may 5 items", [5.0]),                       # "may" is a word too: only "May" is the month
    ("on 5 May", []),
])
def test_the_day_of_a_month_is_no_number_in_lower_case_too(text: str, numbers: list[float]) -> None:
    assert [m.value for m in tv.numbers_in(text)] == numbers


def test_an_apostrophe_inside_a_quoted_phrase_is_part_of_it() -> None:
    assert tv.quoted_phrases("Add 'Archive last year's invoices' to my todos") == ["Archive last year's invoices"]
    assert tv.quoted_phrases("file it under ‘Sam’s reports’ please") == ["Sam’s reports"]


@pytest.mark.parametrize(("text", "excluded"), [
    ("Email our gold customers a reminder. Not Trondheim Cargo though — Ingrid is calling them.",
     [" Trondheim Cargo"]),                                                 # up to "though"
    ("It is not Monday, it is Tuesday.", []),
    ("Not now, later.", []),
])
def test_a_sentence_that_begins_not_and_a_name_leaves_it_out(text: str, excluded: list[str]) -> None:
    assert [text[a:b] for a, b in tv.excluded_spans(text)] == excluded


@pytest.mark.parametrize(("text", "dates"), [
    ("es decir 4,5 horas", []), ("the market 5 stalls", []), ("maybe 4 of them", []), ("decided 3 times", []),
    ("a novel 2 chapters long", []), ("4 marketing leads", []), ("3 decks", []),
    ("Dec 4", ["2026-12-04"]), ("sept. 3", ["2027-09-03"]), ("9 dec", ["2026-12-09"]),
])
def test_a_word_that_begins_like_a_month_names_none(text: str, dates: list[str]) -> None:
    """"decir 4" (Spanish, "that is, 4.5 hours") is no 4 December: a month is its whole name or
    its three letters ("sept" too), never any word that begins with them."""
    assert [m.value for m in tv.dates_in(text, date(2026, 12, 1))] == dates


@pytest.mark.parametrize(("text", "dates"), [
    ("make it due in two weeks", ["2026-12-14"]),
    ("due in 2 weeks", ["2026-12-14"]),
    ("due two weeks from today", ["2026-12-14"]),  # the span from today, not today
    ("in a fortnight", ["2026-12-14"]),
    ("a week from now", ["2026-12-07"]),
    ("in ten days", ["2026-12-10"]),
    ("within two weeks", []),  # a bound, not a day
    ("every two weeks", []),
])
def test_a_day_counted_from_today_in_days_or_weeks(text: str, dates: list[str]) -> None:
    assert [m.value for m in tv.dates_in(text, TODAY)] == dates


@pytest.mark.parametrize(("text", "dates"), [
    ("due the ninth of December", ["2026-12-09"]),
    ("by the twenty-first of January 2027", ["2027-01-21"]),
    ("thirty-first of Dec", ["2026-12-31"]),
    ("on December the ninth", ["2026-12-09"]),
    ("on March first, please", ["2027-03-01"]),
    ("the first March invoice", []),  # an ordinal before a month counts the invoices
    ("the second of the three December runs", []),
])
def test_a_day_written_as_an_ordinal_word_with_its_month(text: str, dates: list[str]) -> None:
    assert [m.value for m in tv.dates_in(text, TODAY)] == dates


@pytest.mark.parametrize(("text", "times"), [
    ("from half six to half seven in the evening", ["18:30", "19:30"]),
    ("meet at half 7 tonight", ["19:30"]),
    ("half nine in the morning", ["09:30"]),
    ("half six", ["18:30"]),  # hours 1 to 6 without a part of the day: the afternoon, as "half past six"
    ("half an hour, half of them, half six hours", []),
    ("starting at seven in the evening", ["19:00"]),       # an hour in words with its part of the day
    ("nine o'clock in the morning, or seven pm", ["09:00", "19:00"]),
    ("the seven evening rehearsals", []),
    ("3 till half 4 in the afternoon", ["15:00", "16:30"]),  # a range whose end is a half hour
    ("3 till half past 4pm", ["15:00", "16:30"]),
    ("half past 4pm", ["16:30"]),                             # not 4pm
])
def test_half_an_hour_said_the_british_way_is_a_time(text: str, times: list[str]) -> None:
    assert [m.value for m in tv.times_in(text)] == times


@pytest.mark.parametrize(("text", "numbers"), [
    ("It was thirty-eight euros forty, on the Amex", [38.4]),
    ("12 dollars and 50 cents", [12.5]),
    ("it cost 7 dollars 5 cents", [7.05]),
    ("5 euros 2 tickets", [5.0, 2.0]),  # a count of something after it: two numbers
    ("three pounds, 20 items", [3.0, 20.0]),
])
def test_an_amount_said_with_its_cents_is_one_number(text: str, numbers: list[float]) -> None:
    assert [m.value for m in tv.numbers_in(text)] == numbers


@pytest.mark.parametrize(("word", "stem"), [("published", "publish"), ("closed", "clos"), ("cancelled", "cancel"),
                                            ("stopping", "stop"), ("archives", "archive"), ("security", "security")])
def test_a_verb_stem_is_a_prefix_of_the_verb(word: str, stem: str) -> None:
    assert tv.verb_stem(word) == stem


@pytest.mark.parametrize(("text", "kinds"), [
    ("eight lessons at 95 francs each, plus the 40-franc booking fee", ["word", "money", "money"]),
    ("a 10-dollar voucher, 300 kronor, 5 euro", ["money", "money", "money"]),
    ("12 pounds of flour, 10 percent, 10 per cent, 10%", ["money", "percent", "percent", "percent"]),
    ("the 2-day course", ["number"]),
])
def test_an_amount_in_currency_words_is_money_and_only_a_percent_is_a_percent(text: str, kinds: list[str]) -> None:
    assert [m.kind for m in tv.numbers_in(text)] == kinds


@pytest.mark.parametrize(("text", "windows"), [
    ("due the last day of this month", []),                 # a day of the month, not the month
    ("due at the end of this month", []),
    ("due the first day of next month", []),
    ("any day next month", [("2026-12-01", "2026-12-31")]),
])
def test_a_day_named_by_its_month_opens_no_window(text: str, windows: list[tuple[str, str]]) -> None:
    assert [m.value for m in tv.windows_in(text, TODAY)] == windows


@pytest.mark.parametrize(("text", "day"), [
    ("can't make Thursday this week; move it to the same time on the following Thursday", "2026-12-10"),
    ("skip this fri, book the following fri instead", "2026-12-11"),
    ("the following Monday", "2026-12-14"),
])
def test_the_following_weekday_is_a_week_after_the_coming_one(text: str, day: str) -> None:
    """Said on Tuesday 1 December: "Thursday" is the 3rd, "the following Thursday" the 10th."""
    assert day in tv.date_values(text, date(2026, 12, 1))


@pytest.mark.parametrize(("text", "days"), [
    ("Do 03.12. 19:30 Probe", ["2026-12-03"]),        # German: weekday, day.month., time
    ("am 3.12.2026 um 19:30", ["2026-12-03"]),         # with its year
    ("bis 15.12. erledigen", ["2026-12-15"]),          # after a preposition of a date
    ("Do 07.01. 19:30 Probe", ["2027-01-07"]),         # a month already past: next year's
    ("version 3.12 is out", []), ("prices rose by 1.5% to 3.12.", []), ("the total is 12.10.", []),
])
def test_a_day_and_month_written_with_dots(text: str, days: list[str]) -> None:
    """Said on Monday 30 November: "03.12." is a date where a weekday, a preposition, a year or a
    time goes with it; a number ending a sentence is none."""
    assert [m.value for m in tv.dates_in(text, TODAY)] == days


@pytest.mark.parametrize(("text", "days"), [
    ("Répétition générale le 15 décembre à 19h", ["2026-12-15"]),
    ("Abgabe bis 15. Dezember 2026", ["2026-12-15"]),
    ("entrega el 15 de diciembre de 2026", ["2026-12-15"]),
    ("consegna il 3 dicembre", ["2026-12-03"]),
    ("prazo 2 de março", ["2027-03-02"]),               # a month already past: next year's
    ("le 1er mars", ["2027-03-01"]), ("levering op 4 mei", ["2027-05-04"]),
    ("Order 5 Mars bars for the stall", []),              # a "mars" of English is a name
    ("15 December", ["2026-12-15"]),                      # the English name, read once
])
def test_a_day_and_a_month_named_in_another_language(text: str, days: list[str]) -> None:
    """Said on Monday 30 November."""
    assert [m.value for m in tv.dates_in(text, TODAY)] == days


@pytest.mark.parametrize(("text", "days"), [
    ("due 12/03", ["2026-12-03"]),   # month first, as before
    ("due 14/12", ["2026-12-14"]),   # 14 is no month: day first
    ("scored 25/30", []),            # neither is a month
])
def test_a_slashed_date_is_day_first_only_where_the_first_number_is_no_month(text: str, days: list[str]) -> None:
    assert [m.value for m in tv.dates_in(text, TODAY)] == days


def test_told_figures_are_the_numbers_and_the_lengths_a_text_states() -> None:
    assert tv.told_figures("Book the booth for two hours, for 3 people.") == {2.0, 3.0, 120.0}
    assert tv.told_figures("An hour and a half, please.") == {90.0}
    assert tv.told_figures("No figures here.") == frozenset()
