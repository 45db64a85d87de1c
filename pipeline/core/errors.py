"""User-facing errors: one line saying what was wrong and what to do, and an exit code."""

from __future__ import annotations

from pydantic import ValidationError
from pydantic_core import ErrorDetails

from pipeline.core.strict_model import UNKNOWN_FIELD


class UserError(Exception):
    """A mistake in the user's input or setup. The CLI prints the message alone and exits."""

    def __init__(self, message: str, exit_code: int = 2) -> None:
        super().__init__(message)
        self.exit_code = exit_code


def problems(exc: ValidationError) -> list[ErrorDetails]:
    """A validation error's problems, unknown fields first: a misspelt field is what the user needs
    to hear of, and it explains the "Field required" of the field it was meant to be."""
    errors = exc.errors(include_url=False)
    return sorted(errors, key=lambda e: e["type"] != UNKNOWN_FIELD)


def first_validation_error(exc: ValidationError, whole: str = "(document)") -> str:
    """``loc: message`` of a validation error's first problem (``problems``), and how many more
    there are; ``whole`` names the location when the problem is the document itself."""
    first = problems(exc)[0]
    loc = ".".join(str(p) for p in first["loc"]) or whole
    more = f" (and {exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
    return f"{loc}: {first['msg']}{more}"
