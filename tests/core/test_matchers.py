"""Every matcher operator, missing fields, dotted paths and ``ignore_case`` (pipeline/matchers.py)."""

from __future__ import annotations

from typing import Any

import pytest

from pipeline.core.matchers import (
    OPERATORS,
    get_path,
    is_operator,
    literal_values,
    match_record,
    match_value,
    matcher_problem,
)

RECORD: dict[str, Any] = {
    "id": "evt-001",
    "title": "Sync with Maya",
    "attendees": ["maya.patel@corp.example", "Omar.Haddad@corp.example"],
    "duration_minutes": 30,
    "start": "2026-12-03T10:00",
    "location": None,
    "organizer": {"name": "Lead", "email": "lead@corp.example"},
}


@pytest.mark.parametrize(
    ("field", "matcher", "expected"),
    [
        # literal = $eq
        ("title", "Sync with Maya", True),
        ("title", "sync with maya", False),
        ("duration_minutes", 30, True),
        ("duration_minutes", 31, False),
        ("attendees", ["maya.patel@corp.example", "Omar.Haddad@corp.example"], True),
        ("attendees", ["maya.patel@corp.example"], False),
        ("title", {"$eq": "Sync with Maya"}, True),
        ("title", {"$eq": "Sync"}, False),
        # $ne
        ("title", {"$ne": "Other"}, True),
        ("title", {"$ne": "Sync with Maya"}, False),
        # $contains on lists (membership) and strings (substring)
        ("attendees", {"$contains": "maya.patel@corp.example"}, True),
        ("attendees", {"$contains": "maya.patel"}, False),
        ("title", {"$contains": "with"}, True),
        ("title", {"$contains": "without"}, False),
        ("duration_minutes", {"$contains": "3"}, False),
        # $in
        ("duration_minutes", {"$in": [15, 30]}, True),
        ("duration_minutes", {"$in": [15, 45]}, False),
        # $prefix
        ("start", {"$prefix": "2026-12-03"}, True),
        ("start", {"$prefix": "2026-12-04"}, False),
        ("duration_minutes", {"$prefix": "3"}, False),
        # $regex: re.search, not a full match
        ("title", {"$regex": r"with\s+M"}, True),
        ("title", {"$regex": r"^with"}, False),
        ("duration_minutes", {"$regex": "30"}, False),
        # $gte / $lte with numbers
        ("duration_minutes", {"$gte": 30}, True),
        ("duration_minutes", {"$gte": 31}, False),
        ("duration_minutes", {"$lte": 30}, True),
        ("duration_minutes", {"$lte": 29}, False),
        # $gte / $lte with ISO dates (string order is date order)
        ("start", {"$gte": "2026-12-03"}, True),
        ("start", {"$gte": "2026-12-04"}, False),
        ("start", {"$lte": "2026-12-03T23:59"}, True),
        ("start", {"$lte": "2026-12-02"}, False),
        # incomparable types never match
        ("start", {"$gte": 5}, False),
        ("duration_minutes", {"$lte": "2026-12-03"}, False),
        # $exists: present and not null
        ("title", {"$exists": True}, True),
        ("title", {"$exists": False}, False),
        ("location", {"$exists": True}, False),
        ("location", {"$exists": False}, True),
        # dotted paths reach nested fields
        ("organizer.email", "lead@corp.example", True),
        ("organizer.email", {"$prefix": "other"}, False),
    ],
)
def test_operator(field: str, matcher: Any, expected: bool) -> None:
    assert match_record(RECORD, {field: matcher}) is expected


@pytest.mark.parametrize(
    ("matcher", "expected"),
    [
        ("anything", False),
        (None, False),
        ({"$eq": None}, False),
        ({"$contains": "x"}, False),
        ({"$in": [None]}, False),
        ({"$prefix": ""}, False),
        ({"$regex": ".*"}, False),
        ({"$gte": 0}, False),
        ({"$lte": "9999"}, False),
        ({"$exists": True}, False),
        # only these two match a missing field
        ({"$ne": "x"}, True),
        ({"$exists": False}, True),
    ],
)
def test_missing_field(matcher: Any, expected: bool) -> None:
    assert match_record(RECORD, {"no_such_field": matcher}) is expected
    assert match_record(RECORD, {"organizer.no_such_field": matcher}) is expected


@pytest.mark.parametrize(
    ("field", "matcher"),
    [
        ("title", "SYNC WITH MAYA"),
        ("title", {"$eq": "sync with maya"}),
        ("attendees", {"$contains": "OMAR.HADDAD@CORP.EXAMPLE"}),
        ("attendees", ["Maya.Patel@corp.example", "omar.haddad@corp.example"]),
        ("title", {"$contains": "MAYA"}),
        ("title", {"$in": ["sync with maya", "other"]}),
        ("title", {"$prefix": "sYNC"}),
        ("title", {"$regex": "^sync WITH"}),
    ],
)
def test_ignore_case_folds_strings_and_lists(field: str, matcher: Any) -> None:
    assert match_record(RECORD, {field: matcher}, ignore_case=True)
    assert not match_record(RECORD, {field: matcher}, ignore_case=False)


def test_ne_with_ignore_case_treats_case_variants_as_equal() -> None:
    assert match_record(RECORD, {"title": {"$ne": "SYNC WITH MAYA"}})
    assert not match_record(RECORD, {"title": {"$ne": "SYNC WITH MAYA"}}, ignore_case=True)


def test_match_record_requires_every_field() -> None:
    assert match_record(RECORD, {"title": {"$contains": "Maya"}, "duration_minutes": 30})
    assert not match_record(RECORD, {"title": {"$contains": "Maya"}, "duration_minutes": 60})
    assert match_record(RECORD, {})


def test_an_operator_object_has_only_dollar_keys() -> None:
    assert all(is_operator({op: 1}) for op in OPERATORS)
    assert is_operator({"$contains": "a", "$prefix": "b"})
    assert not is_operator({"name": "x"})
    assert not is_operator({})
    assert not is_operator("$contains")


@pytest.mark.parametrize(("matcher", "expected"), [
    ({"$gte": 30, "$lte": 30}, True),
    ({"$gte": 15, "$lt": 30}, False),
    ({"$gt": 15, "$lt": 45}, True),
    ({"$prefix": "Sync", "$contains": "Maya"}, True),
    ({"$prefix": "Sync", "$contains": "Omar"}, False),
    ({"$ne": 45, "$in": [15, 30]}, True),
])
def test_several_operators_must_all_hold(matcher: dict[str, Any], expected: bool) -> None:
    field = "title" if "$prefix" in matcher else "duration_minutes"
    assert match_record(RECORD, {field: matcher}) is expected


@pytest.mark.parametrize(("matcher", "message"), [
    ({"$gte": 1, "field": 2}, "mixes operators"),
    ({"$gte": 1, "$between": [1, 2]}, "unknown matcher operator '\\$between'"),
    ({"$in": "evt-001"}, "\\$in takes a list"),
    ({"$regex": "(unclosed"}, "invalid regular expression"),
])
def test_an_operator_looking_object_is_never_a_silent_literal(matcher: dict[str, Any], message: str) -> None:
    assert matcher_problem(matcher) is not None
    with pytest.raises(ValueError, match=message):
        match_value("x", matcher)


def test_two_key_object_is_a_literal() -> None:
    assert match_value({"name": "Lead", "email": "lead@corp.example"}, RECORD["organizer"])
    assert not match_value({"name": "Lead"}, RECORD["organizer"])


def test_unknown_operator_is_rejected() -> None:
    with pytest.raises(ValueError, match="unknown matcher operator"):
        match_value("Sync with Maya", {"$regx": "Maya"})


def test_get_path() -> None:
    assert get_path(RECORD, "organizer.name") == "Lead"
    assert get_path(RECORD, "location") is None
    missing = get_path(RECORD, "nope")
    assert missing is get_path(RECORD, "title.deeper")
    assert missing is not None


@pytest.mark.parametrize(
    ("matcher", "values"),
    [
        ("x", ["x"]),
        ({"$eq": 3}, [3]),
        ({"$contains": "a"}, ["a"]),
        ({"$prefix": "2026"}, ["2026"]),
        ({"$in": ["a", "b"]}, ["a", "b"]),
        ({"$regex": "a.*"}, []),
        ({"$ne": "a"}, []),
        ({"$gte": 1}, []),
        ({"$exists": True}, []),
    ],
)
def test_literal_values(matcher: Any, values: list[Any]) -> None:
    assert literal_values(matcher) == values
