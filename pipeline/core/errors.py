"""User-facing errors: one line saying what was wrong and what to do, and an exit code."""

from __future__ import annotations

from pydantic import ValidationError


class UserError(Exception):
    """A mistake in the user's input or setup. The CLI prints the message alone and exits."""

    def __init__(self, message: str, exit_code: int = 2) -> None:
        super().__init__(message)
        self.exit_code = exit_code


def first_validation_error(exc: ValidationError, whole: str = "(document)") -> str:
    """``loc: message`` of a validation error's first problem, and how many more there are; ``whole``
    names the location when the problem is the document itself."""
    first = exc.errors()[0]
    loc = ".".join(str(p) for p in first["loc"]) or whole
    more = f" (and {exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
    return f"{loc}: {first['msg']}{more}"
