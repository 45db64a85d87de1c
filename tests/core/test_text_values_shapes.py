"""The shapes of single values (pipeline/core/text_values.py): e-mail addresses, ISO dates, clock
times and number words, defined once for every module that reads or writes them."""

from __future__ import annotations

import pytest

from pipeline.core.text_values import CLOCK, EMAIL, ISO_DATE, NUMBER_WORDS, WORDS, clock_value, numbers_in


@pytest.mark.parametrize("value", ["ana@harwick.example", "it-desk@brightline-logistics.example",
                                   "first.last+tag@mail.example.co.uk"])
def test_an_address_is_an_email(value: str) -> None:
    assert EMAIL.fullmatch(value)


@pytest.mark.parametrize("value", ["ana@harwick", "@harwick.example", "ana harwick.example", "ana@@harwick.example",
                                   "Ana Harwick"])
def test_a_value_without_a_dotted_domain_is_no_email(value: str) -> None:
    assert EMAIL.fullmatch(value) is None


def test_the_addresses_of_a_text_are_found_without_their_punctuation() -> None:
    text = "Write to ana@harwick.example, copy ap@harwick.example."
    assert EMAIL.findall(text) == ["ana@harwick.example", "ap@harwick.example"]


@pytest.mark.parametrize(("value", "day", "clock"), [
    ("2026-12-03", "2026-12-03", None),
    ("2026-12-03T11:30", "2026-12-03", "11:30"),
    ("2026-12-03T11:30:00Z", "2026-12-03", "11:30"),
    ("2026-12-03 at noon", "2026-12-03", None),
])
def test_a_value_beginning_with_an_iso_date_gives_its_day_and_time(value: str, day: str, clock: str | None) -> None:
    m = ISO_DATE.match(value)
    assert m is not None and m.groups() == (day, clock)


@pytest.mark.parametrize("value", ["12/03/2026", "3 December 2026", "on 2026-12-03", "26-12-03"])
def test_a_value_not_beginning_with_an_iso_date_is_none(value: str) -> None:
    assert ISO_DATE.match(value) is None


@pytest.mark.parametrize(("value", "clock"), [("9:30", "09:30"), ("09:30", "09:30"), ("21:05", "21:05"),
                                              ("0:00", "00:00"), ("23:59", "23:59")])
def test_a_clock_time_with_one_or_two_hour_digits_is_read_as_hh_mm(value: str, clock: str) -> None:
    assert CLOCK.fullmatch(value)
    assert clock_value(value) == clock


@pytest.mark.parametrize("value", ["24:00", "9:60", "930", "9.30", "09:30:00", "at 9:30", "2026-12-03T09:30"])
def test_anything_else_is_no_clock_time(value: str) -> None:
    assert clock_value(value) is None


def test_each_number_word_stands_at_its_value_and_is_read_as_it() -> None:
    assert len(NUMBER_WORDS) == 21
    for value, word in enumerate(NUMBER_WORDS):
        assert WORDS[word] == value
        assert [m.value for m in numbers_in(f"order {word} boxes")] == [float(value)]


def test_the_tens_and_scale_words_are_numbers_too() -> None:
    assert [WORDS[w] for w in ("thirty", "ninety", "hundred", "dozen", "thousand", "million", "couple", "pair")] == \
        [30, 90, 100, 12, 1000, 1_000_000, 2, 2]
