"""Bounding JSON data (pipeline/core/jsonvalues.py): nesting depth and characters of text."""

from __future__ import annotations

from typing import Any

import pytest

from pipeline.core.jsonvalues import ShapeError, check_shape, load_json


def nested(depth: int) -> list[Any]:
    """A list nested ``depth`` levels deep (``[[...]]``), built without recursion."""
    value: list[Any] = []
    for _ in range(depth - 1):
        value = [value]
    return value


def test_depth_is_counted_in_containers_from_the_top() -> None:
    check_shape({"a": nested(63)}, max_depth=64)  # 64 levels: the dict and 63 lists
    with pytest.raises(ShapeError, match="nested deeper than 64 levels"):
        check_shape({"a": nested(64)}, max_depth=64)


def test_any_depth_is_measured_without_exhausting_the_stack() -> None:
    with pytest.raises(ShapeError, match="nested deeper than 64 levels"):
        check_shape(nested(200_000))


def test_characters_of_strings_and_keys_are_summed_over_the_whole_value() -> None:
    value = {"ab": ["cde", {"f": "gh"}], "i": 1, "j": None}  # 2 + 3 + 1 + 2 + 1 + 1 = 10
    check_shape(value, max_chars=10)
    with pytest.raises(ShapeError, match="larger than 9 characters of text"):
        check_shape(value, max_chars=9)
    with pytest.raises(ShapeError, match="larger than 2 characters"):
        check_shape("abc", max_chars=2)


def test_load_json_turns_the_parsers_recursion_into_a_shape_error() -> None:
    assert load_json('{"a": [1]}') == {"a": [1]}
    with pytest.raises(ShapeError, match="nested deeper than 64 levels"):
        load_json("[" * 100_000 + "]" * 100_000)
