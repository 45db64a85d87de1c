"""The compiled argument check (pipeline/core/arguments.py) agrees with jsonschema on every
operation of every service, for valid arguments and for arguments broken in every way a caller
can break them; messages always come from jsonschema."""

from __future__ import annotations

import random
import re
from typing import Any

import jsonschema
import pytest

from pipeline.core.arguments import ArgumentCheck, describe, json_equal
from pipeline.core.services import catalogue

OPERATIONS = [(spec.name, op) for spec in catalogue().values() for op in spec.operations]
PATTERNED = ["2026-12-03", "2026-01-31", "2026-12-03T10:30", "2026-12-03T24:00", "ana@corp.example", "ana@",
             "10:30", "c-101"]
ODD_VALUES: list[Any] = [None, True, False, 0, 1, -1, 2.5, 3.0, "", "x", "2026-12-03", "high", [], ["a"], [1], {},
                         {"a": 1}, "a" * 300]


def _value(schema: dict[str, Any], rng: random.Random) -> Any:
    """A value that fits ``schema`` (the keywords services use)."""
    if "enum" in schema:
        return rng.choice(schema["enum"])
    kind = schema.get("type")
    kind = rng.choice(kind) if isinstance(kind, list) else kind
    if kind == "string":
        if "pattern" in schema:
            fitting = [s for s in PATTERNED if re.search(schema["pattern"], s)]
            return rng.choice(fitting or PATTERNED)
        return "v" * max(schema.get("minLength", 1), rng.randint(1, 12))
    if kind == "integer":
        low = schema.get("minimum", schema.get("exclusiveMinimum", -1) + 1)
        return rng.randint(int(low), int(low) + 50)
    if kind == "number":
        low = schema.get("minimum", schema.get("exclusiveMinimum", -1) + 0.5)
        return round(low + rng.random() * 100, 2)
    if kind == "boolean":
        return rng.random() < 0.5
    if kind == "array":
        return [_value(schema.get("items", {}), rng) for _ in range(rng.randint(max(schema.get("minItems", 0), 1), 3))]
    if kind == "object":
        return _object(schema, rng)
    return "anything"


def _object(schema: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    props = schema.get("properties", {})
    required = set(schema.get("required", []))
    return {name: _value(sub, rng) for name, sub in props.items() if name in required or rng.random() < 0.6}


def _broken(schema: dict[str, Any], valid: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    """``valid`` with one thing changed: a field dropped, added, or given an odd value (nested too)."""
    args = dict(valid)
    choice = rng.random()
    props = schema.get("properties", {})
    if choice < 0.2 and args:
        args.pop(rng.choice(sorted(args)))
    elif choice < 0.35:
        args[rng.choice(["colour", "extra", "id"])] = rng.choice(ODD_VALUES)
    elif props:
        name = rng.choice(sorted(props))
        value = rng.choice(ODD_VALUES)
        if isinstance(args.get(name), list) and args[name] and rng.random() < 0.5:
            value = [*args[name][:-1], rng.choice(ODD_VALUES)]
        args[name] = value
    return args


@pytest.mark.parametrize(("service", "op"), OPERATIONS, ids=[op.endpoint for _, op in OPERATIONS])
def test_the_fast_check_agrees_with_jsonschema(service: str, op: Any) -> None:
    check = ArgumentCheck(op.parameters)
    assert check.fast is not None, f"{op.endpoint}: the service schema uses a keyword the fast path lacks"
    validator = jsonschema.Draft202012Validator(op.parameters)
    rng = random.Random(op.endpoint)
    outcomes = {True: 0, False: 0}
    for _ in range(150):
        valid = _object(op.parameters, rng)
        for args in (valid, _broken(op.parameters, valid, rng)):
            expected = validator.is_valid(args)
            assert check.fast(args) is expected, (op.endpoint, args)
            assert check.problem(args) == _jsonschema_says(validator, args), (op.endpoint, args)
            outcomes[expected] += 1
    assert min(outcomes.values()) > 20, outcomes  # both kinds of case really occurred


def _jsonschema_says(validator: jsonschema.Draft202012Validator, args: Any) -> str | None:
    """The message of jsonschema's first error (by path), as ``ArgumentCheck.problem`` words it."""
    errors = sorted(validator.iter_errors(args), key=lambda e: list(e.absolute_path))
    return describe(errors[0]) if errors else None


DATED = {"type": "object", "properties": {"id": {"type": "string"}, "title": {"type": "string", "minLength": 1},
                                          "start": {"type": "string", "pattern": r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}$"},
                                          "end": {"type": "string", "pattern": r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}$"},
                                          "code": {"type": ["string", "integer"], "pattern": "^c-"}},
         "required": ["id"], "additionalProperties": False}


@pytest.mark.parametrize("args", [
    {"id": "e1", "start": "2026-12-11T09:00T10:00"},  # one pattern broken: described without jsonschema
    {"id": "e1", "start": "2026-12-11", "end": "2026-12-11"},  # two: the first by path
    {"start": "2026-12-11"},  # and a required field missing
    {"id": "e1", "start": "2026-12-11", "colour": "red"},  # and an unknown field
    {"id": "e1", "start": "2026-12-11", "title": ""},  # and another keyword of another field
    {"id": "e1", "title": ""},  # no pattern broken
    {"id": "e1", "start": 5},  # a pattern field of the wrong type
    {"id": "e1", "code": "x-1"}, {"id": "e1", "code": 7},  # a pattern over a string-or-integer field
])
def test_a_broken_pattern_is_described_as_jsonschema_describes_it(args: dict[str, Any]) -> None:
    assert ArgumentCheck(DATED).problem(args) == _jsonschema_says(jsonschema.Draft202012Validator(DATED), args)


def test_messages_name_the_field() -> None:
    check = ArgumentCheck({"type": "object", "properties": {"title": {"type": "string", "minLength": 1},
                                                            "priority": {"enum": ["low", "high"]}},
                           "required": ["title"], "additionalProperties": False})
    assert check.problem({"title": "x"}) is None
    assert check.problem({}) == "missing required field 'title'"
    assert check.problem({"title": "x", "colour": "red"}) == "unknown field 'colour'; allowed fields: priority, title"
    assert check.problem({"title": "x", "priority": "urgent"}).startswith("invalid field 'priority': ")


def test_a_schema_with_other_keywords_is_left_to_jsonschema() -> None:
    check = ArgumentCheck({"type": "object", "properties": {"a": {"type": "string"}}, "minProperties": 1})
    assert check.fast is None
    assert check.problem({}) is not None and check.problem({"a": "x"}) is None


@pytest.mark.parametrize(("a", "b", "equal"), [
    (1, 1.0, True), (True, 1, False), (False, 0, False), ([1, True], [1, True], True), ([1], [1.0], True),
    ({"a": 1}, {"a": 1}, True), ({"a": 1}, {"a": 2}, False), ("1", 1, False), (None, None, True),
])
def test_json_equality_follows_json_schema(a: Any, b: Any, equal: bool) -> None:
    assert json_equal(a, b) is equal
