"""Checking call arguments against an operation's parameter schema (JSON Schema, draft 2020-12).

Every service call is validated, and one package's verification makes hundreds of calls:
``jsonschema`` is exact but costs tens of microseconds a call. ``compile_schema`` turns the keywords
service schemas use into plain predicates once: ``type``, ``enum``, ``const``, ``properties``,
``required``, ``additionalProperties``, ``items``, ``minItems``/``maxItems``,
``minLength``/``maxLength``, ``pattern``, ``minimum``/``maximum`` and their exclusive forms
(annotations such as ``description`` or ``format`` are ignored, as jsonschema ignores them). A
schema with any other keyword is left to jsonschema alone. Arguments the fast predicate rejects
are checked again by jsonschema, whose first error becomes the one-line message; but for one
failure, worded without it exactly as ``describe`` words jsonschema's error: a string property of a
plain object schema that fails only its ``pattern``, every other property and keyword passing (a
perturbed date-time, the commonest wrong argument of the verifier's mutations), which spares the
verifier importing jsonschema at all on most packages. ``tests/core/test_arguments.py`` compares
predicates and messages with jsonschema's on every service schema.
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # imported when first needed (``ArgumentCheck.validator``): the fast path does without
    import jsonschema

Predicate = Callable[[Any], bool]

_ANNOTATIONS = frozenset({"description", "title", "default", "examples", "format", "$comment", "deprecated",
                          "readOnly", "writeOnly"})
_TYPES: dict[str, Predicate] = {
    "null": lambda v: v is None,
    "boolean": lambda v: isinstance(v, bool),
    "integer": lambda v: (isinstance(v, int) and not isinstance(v, bool)) or (isinstance(v, float) and v.is_integer()),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "string": lambda v: isinstance(v, str),
    "array": lambda v: isinstance(v, list),
    "object": lambda v: isinstance(v, dict),
}
_NUMBER = _TYPES["number"]


class Unsupported(Exception):
    """A schema keyword the fast path does not compile."""


def json_equal(a: Any, b: Any) -> bool:
    """JSON equality as JSON Schema defines it: ``true`` is not ``1``, ``1`` is ``1.0``."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    if isinstance(a, (list, dict)) or isinstance(b, (list, dict)):
        return False
    return bool(a == b)


def _compile(schema: Any) -> Predicate:
    if schema is True or schema == {}:
        return lambda _v: True
    if schema is False:
        return lambda _v: False
    if not isinstance(schema, dict):
        raise Unsupported(repr(schema))
    unknown = set(schema) - _ANNOTATIONS - _KEYWORDS.keys()
    if unknown:
        raise Unsupported(sorted(unknown)[0])
    if _plain_object(schema):
        return _object(schema)
    tests = [_KEYWORDS[key](schema[key], schema) for key in schema if key in _KEYWORDS]
    return _all_of([t for t in tests if t is not None])


_OBJECT_KEYWORDS = frozenset({"type", "properties", "required", "additionalProperties"})


def _plain_object(schema: dict[str, Any]) -> bool:
    """An object schema of ``type: object``, ``properties``, ``required`` and a boolean
    ``additionalProperties`` alone (each optional)."""
    return _OBJECT_KEYWORDS.issuperset(set(schema) - _ANNOTATIONS) and schema.get("type", "object") == "object" \
        and schema.get("additionalProperties", True) in (True, False)


def _object(schema: dict[str, Any]) -> Predicate:
    """An object schema of ``type: object``, ``properties``, ``required`` and a boolean
    ``additionalProperties`` (each optional) as one predicate: what ``_all_of`` of those keywords'
    predicates says, in one pass over the value."""
    typed = "type" in schema
    compiled = {name: _compile(sub) for name, sub in schema.get("properties", {}).items()}
    required = list(schema.get("required", []))
    closed = schema.get("additionalProperties", True) is False

    def check(v: Any) -> bool:
        if not isinstance(v, dict):
            return not typed
        for key, item in v.items():
            test = compiled.get(key)
            if test is None:
                if closed:
                    return False
            elif not test(item):
                return False
        for name in required:  # noqa: SIM110 - a loop: faster than all() over a generator, on the hot path
            if name not in v:
                return False
        return True

    return check


def _all_of(tests: list[Predicate]) -> Predicate:
    if not tests:
        return lambda _v: True
    if len(tests) == 1:
        return tests[0]

    def check(v: Any) -> bool:
        for test in tests:  # noqa: SIM110 - a loop: faster than all() over a generator, on the hot path
            if not test(v):
                return False
        return True

    return check


def _type(value: Any, _schema: dict[str, Any]) -> Predicate:
    names = value if isinstance(value, list) else [value]
    if any(n not in _TYPES for n in names):
        raise Unsupported(f"type {value!r}")
    checks = [_TYPES[n] for n in names]
    if len(checks) == 1:
        return checks[0]
    return lambda v: any(c(v) for c in checks)


def _enum(value: Any, _schema: dict[str, Any]) -> Predicate:
    options = list(value)
    plain = all(isinstance(o, str) for o in options)
    if plain:
        allowed = frozenset(options)
        return lambda v: isinstance(v, str) and v in allowed
    return lambda v: any(json_equal(v, o) for o in options)


def _const(value: Any, _schema: dict[str, Any]) -> Predicate:
    return lambda v: json_equal(v, value)


def _properties(value: dict[str, Any], _schema: dict[str, Any]) -> Predicate:
    compiled = {name: _compile(sub) for name, sub in value.items()}

    def check(v: Any) -> bool:
        if not isinstance(v, dict):
            return True
        for key, item in v.items():
            test = compiled.get(key)
            if test is not None and not test(item):
                return False
        return True

    return check


def _required(value: list[str], _schema: dict[str, Any]) -> Predicate:
    names = list(value)
    return lambda v: not isinstance(v, dict) or all(n in v for n in names)


def _additional(value: Any, schema: dict[str, Any]) -> Predicate | None:
    if "patternProperties" in schema:
        raise Unsupported("patternProperties")
    declared = frozenset(schema.get("properties", {}))
    if value is True:
        return None
    if value is False:
        return lambda v: not isinstance(v, dict) or declared.issuperset(v)
    extra = _compile(value)
    return lambda v: not isinstance(v, dict) or all(extra(x) for k, x in v.items() if k not in declared)


def _items(value: Any, schema: dict[str, Any]) -> Predicate:
    if "prefixItems" in schema or not isinstance(value, (dict, bool)):
        raise Unsupported("items")
    each = _compile(value)
    return lambda v: not isinstance(v, list) or all(each(x) for x in v)


def _bound(applies: Predicate, measure: Callable[[Any], Any], compare: Callable[[Any, Any], bool]
           ) -> Callable[[Any, dict[str, Any]], Predicate]:
    """A keyword that bounds ``measure(value)`` for the values it ``applies`` to (others pass)."""

    def build(limit: Any, _schema: dict[str, Any]) -> Predicate:
        return lambda v: not applies(v) or compare(measure(v), limit)

    return build


def _same(value: Any) -> Any:
    return value


def _pattern(value: str, _schema: dict[str, Any]) -> Predicate:
    pattern = re.compile(value)
    return lambda v: not isinstance(v, str) or pattern.search(v) is not None


_KEYWORDS: dict[str, Callable[[Any, dict[str, Any]], Predicate | None]] = {
    "type": _type,
    "enum": _enum,
    "const": _const,
    "properties": _properties,
    "required": _required,
    "additionalProperties": _additional,
    "items": _items,
    "pattern": _pattern,
    "minLength": _bound(_TYPES["string"], len, operator.ge),
    "maxLength": _bound(_TYPES["string"], len, operator.le),
    "minItems": _bound(_TYPES["array"], len, operator.ge),
    "maxItems": _bound(_TYPES["array"], len, operator.le),
    "minimum": _bound(_NUMBER, _same, operator.ge),
    "maximum": _bound(_NUMBER, _same, operator.le),
    "exclusiveMinimum": _bound(_NUMBER, _same, operator.gt),
    "exclusiveMaximum": _bound(_NUMBER, _same, operator.lt),
}


class ArgumentCheck:
    """One operation's parameter schema, compiled once. ``problem(args)`` is None for valid
    arguments, else one line naming the bad field."""

    def __init__(self, schema: dict[str, Any]) -> None:
        self.schema = schema
        self._validator: jsonschema.Draft202012Validator | None = None
        self._properties: dict[str, tuple[Predicate, Predicate]] | None = None
        """Each property's predicate, and its predicate without ``pattern`` (``_pattern_mismatch``)."""
        try:
            self.fast: Predicate | None = _compile(schema)
        except Unsupported:
            self.fast = None

    def problem(self, args: dict[str, Any]) -> str | None:
        if self.fast is not None and self.fast(args):
            return None
        mismatch = self._pattern_mismatch(args) if self.fast is not None else None
        if mismatch is not None:
            return mismatch
        errors = sorted(self.validator.iter_errors(args), key=lambda e: list(e.absolute_path))
        return describe(errors[0]) if errors else None

    def _pattern_mismatch(self, args: Any) -> str | None:
        """What ``describe`` says of jsonschema's only error when ``args`` breaks nothing but one
        string property's ``pattern`` of a plain object schema (``_OBJECT_KEYWORDS``): "invalid
        field 'start': '...' does not match '...'"; None for any other failure."""
        schema = self.schema
        if not isinstance(args, dict) or not _plain_object(schema):
            return None
        if any(name not in args for name in schema.get("required", [])):
            return None
        properties = schema.get("properties", {})
        if schema.get("additionalProperties", True) is False and not properties.keys() >= args.keys():
            return None
        if self._properties is None:
            self._properties = {name: (_compile(sub), _compile({k: v for k, v in sub.items() if k != "pattern"}))
                                for name, sub in properties.items() if isinstance(sub, dict)}
        found = None
        for key, value in args.items():
            if key not in properties:
                continue
            whole, without_pattern = self._properties.get(key, (None, None))
            if whole is None or without_pattern is None:
                return None
            if whole(value):
                continue
            pattern = properties[key].get("pattern")
            if found is not None or not isinstance(value, str) or not isinstance(pattern, str) or not without_pattern(value):
                return None
            found = f"invalid field {key or '(arguments)'!r}: {value!r} does not match {pattern!r}"
        return found

    @property
    def validator(self) -> jsonschema.Draft202012Validator:
        """The exact validator of the schema, made on first need (most arguments pass the fast
        predicate, and ``jsonschema`` costs a noticeable share of start-up to import)."""
        if self._validator is None:
            import jsonschema

            self._validator = jsonschema.Draft202012Validator(self.schema)
        return self._validator


def describe(err: jsonschema.ValidationError) -> str:
    """One line for a validation error, naming the field."""
    if err.validator == "required":
        present = err.instance if isinstance(err.instance, dict) else {}
        missing = [r for r in err.validator_value if r not in present] if isinstance(err.validator_value, list) else []
        prefix = "".join(f"{p}." for p in err.absolute_path)
        return f"missing required field {prefix + missing[0]!r}" if missing else err.message
    where = ".".join(str(p) for p in err.absolute_path)
    if err.validator == "additionalProperties" and isinstance(err.instance, dict):
        allowed = sorted(err.schema.get("properties", {}) if isinstance(err.schema, Mapping) else {})
        extra = sorted(set(err.instance) - set(allowed))
        name = f"{where}.{extra[0]}" if where and extra else (extra[0] if extra else where)
        return f"unknown field {name!r}; allowed fields: {', '.join(allowed)}"
    return f"invalid field {where or '(arguments)'!r}: {err.message}"
