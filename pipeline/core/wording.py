"""Counts in words, as every command writes them: ``1 record``, ``3 records``, ``1,200 rows``."""

from __future__ import annotations


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """``n`` with thousands separated by commas, then ``noun``, or its plural unless ``n`` is 1
    (``plural``, by default ``noun`` + ``s``): ``counted(1, "record")`` is ``1 record``,
    ``counted(1200, "package")`` ``1,200 packages``, ``counted(2, "reply", "replies")`` ``2 replies``."""
    return f"{n:,} {noun if n == 1 else plural or noun + 's'}"
