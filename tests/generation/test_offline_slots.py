"""Slot sampling for the offline generator (``pipeline/generation/slots.py``)."""

from __future__ import annotations

import re
from datetime import date
from random import Random

import pytest

from pipeline.generation.slots import SlotError, clock_date, fill_slots, pools


def fill(specs: dict, seed: int = 1) -> dict:
    return fill_slots(specs, Random(seed))


def test_people_are_distinct_across_slots_with_directory_fields() -> None:
    out = fill({"team": {"people": 6}, "guests": {"people": 5}})
    everyone = out["team"] + out["guests"]
    assert len({p["first"] for p in everyone}) == 11 and len({p["last"] for p in everyone}) == 11
    assert len({p["phone"] for p in everyone}) == 11
    departments = pools()["people"]["departments"]
    for p in everyone:
        assert p["name"] == f"{p['first']} {p['last']}"
        assert p["email"] == f"{p['first']}.{p['last']}@corp.example".lower()
        assert p["title"] in departments[p["department"]]
        assert re.fullmatch(r"\+1-555-0\d{3}", p["phone"])


def test_people_options_share_a_department_or_keep_titles_distinct() -> None:
    for seed in range(20):
        same = fill({"p": {"people": 3, "same_department": True, "distinct_titles": True}}, seed)["p"]
        assert len({p["department"] for p in same}) == 1 and len({p["title"] for p in same}) == 3
        spread = fill({"p": {"people": 9, "distinct_titles": True}}, seed)["p"]
        assert len({p["title"] for p in spread}) == 9


def test_pool_entries_are_not_drawn_twice_within_an_item() -> None:
    out = fill({"one": {"pool": "tasks"}, "more": {"pool": "tasks", "k": 20}})
    assert isinstance(out["one"], str) and len(out["more"]) == 20
    assert out["one"] not in out["more"] and len(set(out["more"])) == 20


def test_pool_same_option_shares_the_field() -> None:
    for seed in range(20):
        group = fill({"g": {"pool": "products", "k": 4, "same": "category"}}, seed)["g"]
        assert len({p["category"] for p in group}) == 1 and len({p["name"] for p in group}) == 4


def test_numbers_dates_and_times_stay_in_range() -> None:
    today = clock_date()
    for seed in range(30):
        out = fill({
            "n": {"int": [12, 180], "step": 4}, "ns": {"int": [1, 6], "k": 6},
            "m": {"money": [4, 900], "step": 0.05}, "d": {"date": [2, 9], "weekdays": True},
            "ds": {"date": [-3, 3], "k": 7}, "t": {"time": [9, 11]}, "c": {"choice": ["a", "b"], "k": 2},
        }, seed)
        assert 12 <= out["n"] <= 180 and (out["n"] - 12) % 4 == 0
        assert sorted(out["ns"]) == [1, 2, 3, 4, 5, 6]
        assert 4 <= out["m"] <= 900 and round(out["m"] * 100) % 5 == 0
        day = date.fromisoformat(out["d"])
        assert 2 <= (day - today).days <= 9 and day.weekday() < 5
        assert sorted((date.fromisoformat(d) - today).days for d in out["ds"]) == list(range(-3, 4))
        assert out["t"] in {"09:00", "09:30", "10:00", "10:30", "11:00"}
        assert sorted(out["c"]) == ["a", "b"]


def test_same_rng_state_same_slots() -> None:
    specs = {"p": {"people": 4}, "x": {"pool": "companies", "k": 3}, "d": {"date": [0, 60]}}
    assert fill(specs, 42) == fill(specs, 42)
    assert fill(specs, 42) != fill(specs, 43)


@pytest.mark.parametrize(("spec", "message"), [
    ({"bogus": 1}, "needs exactly one of"),
    ({"int": [1, 2], "date": [1, 2]}, "needs exactly one of"),
    ({"int": [1, 2], "colour": "red"}, "needs exactly one of"),
    ("people", "expected a mapping"),
    ({"pool": "no_such_pool"}, "unknown list pool 'no_such_pool'"),
    ({"pool": "warehouses", "k": 99}, "cannot draw 99 more entries"),
    ({"choice": ["a"], "k": 2}, "cannot choose 2 of 1"),
    ({"int": [5, 1]}, "empty range"),
    ({"date": [1, 3], "k": 4}, "fewer than 4 dates"),
    ({"people": 500}, "cannot draw 500 more distinct people"),
])
def test_bad_slot_specs_are_refused(spec: object, message: str) -> None:
    with pytest.raises(SlotError, match=message):
        fill({"s": spec})
