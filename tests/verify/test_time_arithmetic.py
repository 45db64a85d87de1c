"""Clock and calendar arithmetic (pipeline/verify/time_arithmetic.py)."""

from __future__ import annotations

import pytest

from pipeline.verify.time_arithmetic import (
    clock_at,
    clock_minutes,
    range_lengths,
    series_dates,
    shift_clock,
    weekdays_after,
)


@pytest.mark.parametrize(("clock", "minutes"), [("00:00", 0), ("09:30", 570), ("9:30", 570), ("21:05", 1265)])
def test_the_minutes_of_a_clock_time(clock: str, minutes: int) -> None:
    assert clock_minutes(clock) == minutes


def test_a_clock_time_is_written_for_minutes_inside_the_day_only() -> None:
    assert [clock_at(m) for m in (0, 570, 1439, 1440, -1)] == ["00:00", "09:30", "23:59", None, None]


def test_a_clock_time_moved_by_minutes() -> None:
    assert shift_clock("9:30", 45) == "10:15" and shift_clock("10:00", -15) == "09:45"
    assert shift_clock("23:30", 45) is None and shift_clock("00:10", -15) is None


def test_the_length_of_each_range_between_two_clock_times() -> None:
    assert range_lengths(["13:00", "17:00"]) == {240.0, 4.0}
    assert range_lengths(["09:00", "09:30", "10:00"]) == {30.0, 0.5, 60.0, 1.0}
    assert range_lengths(["12:00"]) == set()


def test_the_dates_of_a_weekly_series_run_for_a_year() -> None:
    dates = series_dates("The stand-up is weekly, the first on 2026-12-07.", {"2026-12-07"})
    assert {"2026-12-14", "2026-12-21", "2027-11-29"} <= dates and len(dates) == 52
    assert series_dates("The stand-up is on 2026-12-07.", {"2026-12-07"}) == set()


def test_a_monthly_series_keeps_the_day_of_the_month() -> None:
    dates = series_dates("Rent is due monthly from 2026-11-03.", {"2026-11-03"})
    assert sorted(dates)[:3] == ["2026-12-03", "2027-01-03", "2027-02-03"] and len(dates) == 12


def test_a_weekday_named_after_a_date_is_the_first_such_day_after_it() -> None:
    text = "Wednesday 2026-12-09 is full, so two on Thursday."
    assert weekdays_after(text, {"2026-12-09"}) == {"2026-12-10", "2026-12-16"}  # Wednesday: the next one
    assert weekdays_after(text, set()) == set()
