"""User-facing errors: one line saying what was wrong and what to do, and an exit code."""

from __future__ import annotations


class UserError(Exception):
    """A mistake in the user's input or setup. The CLI prints the message alone and exits."""

    def __init__(self, message: str, exit_code: int = 2) -> None:
        super().__init__(message)
        self.exit_code = exit_code
