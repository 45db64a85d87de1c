"""Models that refuse a field they do not have, and say which field was meant.

Every pydantic model of the package derives from ``StrictModel`` (``extra="forbid"``); the few
that keep extra fields on purpose are listed, with their reason, in
``tests/core/test_strict_models.py``. An unknown field is one validation error at that field's
location whose message names the field, the model and the nearest field it does have::

    unknown field 'colour' of RunOptions; did you mean 'count'?

A model may also name, in ``elsewhere``, words that are not its fields but that a user reaches for,
with where they belong (``RunOptions``: the catalog is ``start_run``'s argument); those are refused
with that pointer instead of a guess.
"""

from __future__ import annotations

import difflib
import functools
from collections.abc import Mapping
from typing import Any, ClassVar, Self

from pydantic import BaseModel, ConfigDict, ModelWrapValidatorHandler, ValidationError, model_validator
from pydantic_core import InitErrorDetails, PydanticCustomError

UNKNOWN_FIELD = "unknown_field"
"""The error type of an unknown field (pydantic's own is ``extra_forbidden``)."""


def unknown_field_message(name: str, owner: str, fields: list[str], elsewhere: Mapping[str, str] | None = None) -> str:
    """What to say of ``name``, which is not one of ``fields`` of ``owner``: where it belongs when
    ``elsewhere`` knows it, else the nearest of ``fields`` (``difflib``), else all of them."""
    if elsewhere and name in elsewhere:
        return f"unknown field {name!r} of {owner}; {elsewhere[name]}"
    nearest = difflib.get_close_matches(name, fields, n=1, cutoff=0.6)
    if nearest:
        return f"unknown field {name!r} of {owner}; did you mean {nearest[0]!r}?"
    return f"unknown field {name!r} of {owner}; its fields are {', '.join(fields)}"


class StrictModel(BaseModel):
    """A pydantic model that refuses unknown fields with ``unknown_field_message``."""

    model_config = ConfigDict(extra="forbid")


    elsewhere: ClassVar[Mapping[str, str]] = {}
    """Names that are not fields of this model but that a user may write, each with where it belongs."""

    @model_validator(mode="wrap")
    @classmethod
    def _name_unknown_fields(cls, data: Any, handler: ModelWrapValidatorHandler[Self]) -> Self:
        try:
            return handler(data)
        except ValidationError as exc:
            failure = exc
        named = _unknown_fields_named(cls, failure)
        try:
            if named is None:
                raise failure
            raise named from None
        finally:  # an error this frame still held would hold the frame (its traceback): a cycle
            del failure, named

    @classmethod
    def field_names(cls) -> list[str]:
        """The names this model accepts: its fields, and their aliases."""
        names = list(cls.model_fields)
        names += [f.alias for f in cls.model_fields.values() if f.alias and f.alias not in names]
        return names


def _unknown_fields_named(model: type[StrictModel], exc: ValidationError) -> ValidationError | None:
    """``exc`` with each of ``model``'s own unknown fields worded by ``unknown_field_message`` (the
    other errors as they were); None when it has none."""
    errors = exc.errors(include_url=False)
    if not any(_is_own_extra(e["type"], e["loc"]) for e in errors):
        return None
    details: list[InitErrorDetails] = []
    for e in errors:
        if _is_own_extra(e["type"], e["loc"]):
            message = _own_unknown_field_message(model, str(e["loc"][0]))
            kind = PydanticCustomError(UNKNOWN_FIELD, message)
        else:
            kind = PydanticCustomError(e["type"], e["msg"])
        details.append(InitErrorDetails(type=kind, loc=e["loc"], input=e["input"]))
    return ValidationError.from_exception_data(exc.title, details)


@functools.lru_cache(maxsize=256)
def _own_unknown_field_message(model: type[StrictModel], name: str) -> str:
    """``unknown_field_message`` of ``name`` for ``model``, worked out once per pair: a smart union
    (a package's steps) words its members' unknown fields on every value it tries."""
    return unknown_field_message(name, model.__name__, model.field_names(), model.elsewhere)


def _is_own_extra(kind: str, loc: tuple[int | str, ...]) -> bool:
    return kind == "extra_forbidden" and len(loc) == 1
