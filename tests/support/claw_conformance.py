"""Conformance cases of the ``claw`` profile: calls with the status and response ClawEnvKit's mock
services give, kept as data in ``tests/core/claw_conformance/<service>.yaml`` (``CASES_DIR``), read
by ``tests/core/test_claw_conformance.py`` and ``bench/claw_conformance.py`` (not shipped).

A case file holds ``service``, default ``fixtures`` (ClawEnvKit's fixture-file content), and
``cases``, each with a ``name``, optional ``fixtures`` of its own, and ``calls``: ``endpoint``,
``body``, and the expected ``status`` and ``response``. A response matches when ``expected`` is
a subset of it (``response_matches``); wall-clock timestamps and random ids are left out of
expectations or written ``"<any>"``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

CASES_DIR = Path(__file__).resolve().parent.parent / "core" / "claw_conformance"
"""Where the case files are."""
ANY = "<any>"


@dataclass(frozen=True)
class Call:
    endpoint: str
    body: dict[str, Any]
    status: int
    response: Any


@dataclass(frozen=True)
class Case:
    service: str
    name: str
    fixtures: Any
    calls: tuple[Call, ...]


def response_matches(expected: Any, actual: Any) -> bool:
    """``expected`` is a subset of ``actual``: objects by their listed keys, lists item by item
    with equal lengths, ``"<any>"`` anything, numbers by value (``1`` is ``1.0``), other values equal."""
    if expected == ANY:
        return True
    if isinstance(expected, dict):
        return isinstance(actual, dict) and all(k in actual and response_matches(v, actual[k]) for k, v in expected.items())
    if isinstance(expected, list):
        return (isinstance(actual, list) and len(expected) == len(actual)
                and all(response_matches(e, a) for e, a in zip(expected, actual, strict=True)))
    if isinstance(expected, bool) or isinstance(actual, bool):
        return expected is actual
    return bool(expected == actual)


def load_cases(parse: Callable[[str], Any], folder: Path = CASES_DIR) -> list[Case]:
    """Every case of every ``*.yaml`` file in ``folder``, by file name and then in file order, each
    file's text read by ``parse`` (the package's own YAML reader, ``pipeline.core.yaml_text.load``:
    the test doubles import nothing of the package)."""
    cases = []
    for path in sorted(folder.glob("*.yaml")):
        doc = parse(path.read_text(encoding="utf-8"))
        for c in doc["cases"]:
            calls = tuple(Call(k["endpoint"], k.get("body") or {}, k.get("status", 200), k.get("response"))
                          for k in c["calls"])
            cases.append(Case(doc["service"], c["name"], c.get("fixtures", doc.get("fixtures")), calls))
    return cases
