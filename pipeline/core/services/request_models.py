"""Arguments checked and completed as a FastAPI service's pydantic request model does it (lax mode).

Services of the ``fastapi`` dialect (``ServiceSpec.dialect``) read their parameter schema as such a
model: each property is a field of its ``type`` (string, integer, number, boolean, array with
``items``, object); a field is optional when it has a ``default`` and may be null when its type
lists "null" or its default is null. ``RequestModel.parse(args)`` returns the arguments the
service sees, or the validation errors FastAPI answers with status 422:

- unknown arguments are dropped; an omitted field takes its default (none when the default is
  null); a null given for a nullable field is kept as null;
- values are converted as pydantic's lax mode converts them: an integer accepts a boolean, a
  float with no fraction (below 2**63 in size) and a string of ASCII digits (surrounding spaces,
  single underscores between digits and a fraction of zeros allowed: " 1_000.0 " is 1000); a
  number accepts an integer, a boolean and an ASCII numeric string (as a float); a boolean accepts
  0/1 and the strings pydantic reads as booleans (any case, no surrounding spaces);
  a string accepts only a string; an array only a list, its items checked in turn;
- each error is ``{"type", "loc": ["body", field(, index)], "msg", "input"}`` with pydantic's type
  names and messages, in the order of the schema's properties; an array gives one error per bad
  item, its ``input`` the item.
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass
from typing import Any

_MISSING: Any = object()
_TRUE = frozenset({"1", "on", "t", "true", "y", "yes"})
_FALSE = frozenset({"0", "off", "f", "false", "n", "no"})
_INTEGER = re.compile(r"^[+-]?\d+(?:_\d+)*(?:\.0+)?$", re.ASCII)
_INT_LIMIT = 2**63

Error = dict[str, Any]


class _Invalid(Exception):
    def __init__(self, kind: str, msg: str, loc: tuple[Any, ...] = (), value: Any = _MISSING,
                 more: tuple[_Invalid, ...] = ()) -> None:
        super().__init__(msg)
        self.kind, self.msg, self.loc, self.value, self.more = kind, msg, loc, value, more

    def errors(self, field: str, value: Any) -> list[Error]:
        """This error and those ``more`` holds, as FastAPI's 422 items for ``field``."""
        return [{"type": e.kind, "loc": ["body", field, *e.loc], "msg": e.msg,
                 "input": value if e.value is _MISSING else e.value} for e in (self, *self.more)]


def _types(schema: dict[str, Any]) -> list[str]:
    t = schema.get("type", [])
    return [t] if isinstance(t, str) else list(t)


def _convert(schema: dict[str, Any], value: Any) -> Any:
    """``value`` converted to the field's type, or ``_Invalid``."""
    types = [t for t in _types(schema) if t != "null"]
    kind = types[0] if types else None
    if kind == "string":
        if isinstance(value, str):
            return value
        raise _Invalid("string_type", "Input should be a valid string")
    if kind == "integer":
        if isinstance(value, bool):
            return int(value)
        if isinstance(value, int):
            return value
        if isinstance(value, float):
            if value.is_integer() and abs(value) < _INT_LIMIT:
                return int(value)
            if value.is_integer():
                raise _Invalid("int_parsing_size", "Unable to parse input string as an integer, exceeded maximum size")
            raise _Invalid("int_from_float", "Input should be a valid integer, got a number with a fractional part")
        if isinstance(value, str):
            if _INTEGER.match(value.strip()):
                return int(value.strip().split(".")[0])
            raise _Invalid("int_parsing", "Input should be a valid integer, unable to parse string as an integer")
        raise _Invalid("int_type", "Input should be a valid integer")
    if kind == "number":
        if isinstance(value, (bool, int, float)):
            return float(value)
        if isinstance(value, str):
            try:
                if not value.isascii():
                    raise ValueError(value)
                return float(value)
            except ValueError:
                raise _Invalid("float_parsing", "Input should be a valid number, unable to parse string as a number") from None
        raise _Invalid("float_type", "Input should be a valid number")
    if kind == "boolean":
        if isinstance(value, bool):
            return value
        if isinstance(value, (int, float)) and value in (0, 1):
            return bool(value)
        if isinstance(value, str) and value.lower() in _TRUE | _FALSE:
            return value.lower() in _TRUE
        if isinstance(value, str) or (isinstance(value, (int, float)) and float(value).is_integer()
                                      and abs(value) < _INT_LIMIT):
            raise _Invalid("bool_parsing", "Input should be a valid boolean, unable to interpret input")
        raise _Invalid("bool_type", "Input should be a valid boolean")
    if kind == "array":
        if not isinstance(value, list):
            raise _Invalid("list_type", "Input should be a valid list")
        items = schema.get("items", {})
        out, bad = [], []
        for i, item in enumerate(value):
            try:
                out.append(_convert(items, item) if items else item)
            except _Invalid as e:
                bad += [_Invalid(b.kind, b.msg, (i, *b.loc), item if b.value is _MISSING else b.value)
                        for b in (e, *e.more)]
        if bad:
            raise _Invalid(bad[0].kind, bad[0].msg, bad[0].loc, bad[0].value, tuple(bad[1:]))
        return out
    if kind == "object":
        if isinstance(value, dict):
            return value
        raise _Invalid("dict_type", "Input should be a valid dictionary")
    return value


@dataclass(frozen=True, slots=True)
class _Field:
    name: str
    schema: dict[str, Any]
    required: bool
    nullable: bool
    default: Any


class RequestModel:
    """A parameter schema read as a pydantic request model (see the module docstring)."""

    def __init__(self, parameters: dict[str, Any]) -> None:
        required = set(parameters.get("required", []))
        self.fields = tuple(
            _Field(name, schema, name in required and "default" not in schema,
                   "null" in _types(schema) or ("default" in schema and schema["default"] is None),
                   schema.get("default", _MISSING))
            for name, schema in parameters.get("properties", {}).items())

    def parse(self, args: dict[str, Any]) -> tuple[dict[str, Any], list[Error]]:
        """(the arguments the service sees, errors); arguments are meaningful only without errors."""
        out: dict[str, Any] = {}
        errors: list[Error] = []
        for f in self.fields:
            value = args.get(f.name, _MISSING)
            if value is _MISSING:
                if f.required:
                    errors.append({"type": "missing", "loc": ["body", f.name], "msg": "Field required", "input": args})
                elif f.default is not None and f.default is not _MISSING:
                    out[f.name] = copy.deepcopy(f.default)
                continue
            if value is None and f.nullable:
                out[f.name] = None
                continue
            try:
                out[f.name] = _convert(f.schema, value)
            except _Invalid as e:
                errors += e.errors(f.name, value)
        return out, errors

    def logged(self, parsed: dict[str, Any]) -> dict[str, Any]:
        """``parsed`` as the service logs its request (pydantic's ``model_dump()``): every declared
        field in declaration order, None for one neither given nor defaulted."""
        return {f.name: parsed.get(f.name) for f in self.fields}
