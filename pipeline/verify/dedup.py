"""Duplicate detection: the hook the catalog plugs into. Raises ``duplicate_package``.

Two packages are duplicates when their ids are equal (same content), or near-duplicates when their
normalised request text and their initial state are equal (they differ only in wording of checks,
tools or provenance, which does not make a new training environment).
"""

from __future__ import annotations

from typing import Any, Protocol

from pipeline.core.codes import Code
from pipeline.core.outcomes import Finding
from pipeline.core.package import TaskPackage, fingerprint, near_key


class DedupIndex(Protocol):
    def find_duplicate(self, package_id: str, near: str) -> str | None:
        """The id of an already accepted package that this one duplicates, or None."""
        ...


class MemoryDedup:
    """An in-process index: remembers every package it is told was accepted."""

    def __init__(self) -> None:
        self._ids: set[str] = set()
        self._near: dict[str, str] = {}

    def find_duplicate(self, package_id: str, near: str) -> str | None:
        if package_id in self._ids:
            return package_id
        return self._near.get(near)

    def add(self, package: TaskPackage) -> None:
        self.add_key(package.id, near_key(package))

    def add_document(self, document: dict[str, Any], package_id: str) -> None:
        """Remember a package held as plain (valid) data, under the id its verdict computed."""
        self.add_key(package_id, fingerprint(document["request"]["text"], document.get("initial_state") or {}))

    def add_key(self, package_id: str, near: str) -> None:
        self._ids.add(package_id)
        self._near.setdefault(near, package_id)


def duplicate_findings(package: TaskPackage, index: DedupIndex | None, near: str | None = None) -> list[Finding]:
    """``duplicate_package`` if ``index`` already holds this package (``near``: its precomputed
    ``near_key``, when the caller has it)."""
    if index is None:
        return []
    return duplicate_key_findings(package.id, near or near_key(package), index)


def duplicate_key_findings(package_id: str, near: str, index: DedupIndex) -> list[Finding]:
    """``duplicate_findings``'s answer for a package known by its id and ``near_key`` alone."""
    other = index.find_duplicate(package_id, near)
    if other is None:
        return []
    same = "the same package" if other == package_id else f"a near-identical package ({other})"
    return [Finding(code=Code.DUPLICATE_PACKAGE, detail={"duplicate_of": other},
                    message=f"{same} was already accepted (same request and initial state)")]
