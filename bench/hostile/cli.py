"""Hostile command lines: broken links and failing packages given to ``verify`` and ``play``, and
help that must read as prose on every command."""

from __future__ import annotations

import json
from pathlib import Path

from bench.hostile_inputs import Case, Outcome

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "todo-three-items.json"
PYTHON_TYPES = ("<bool>", "<list[", "<str>", "<int", "<float", "<Path>", "{")


def _broken_link(workdir: Path) -> list[str]:
    (workdir / "good.json").write_text(EXAMPLE.read_text())
    (workdir / "gone.json").symlink_to(workdir / "missing.json")
    return ["verify", str(workdir)]


def _direct_link(workdir: Path) -> list[str]:
    (workdir / "x.json").symlink_to(workdir / "nowhere.json")
    return ["verify", str(workdir / "x.json")]


def _empty_jsonl(workdir: Path) -> list[str]:
    (workdir / "empty.jsonl").write_text("")
    return ["verify", str(workdir / "empty.jsonl")]


def _failing(workdir: Path, *extra: str) -> list[str]:
    data = json.loads(EXAMPLE.read_text())
    data["reference"] = data["reference"][-1:]  # answers without doing anything
    path = workdir / "fails.json"
    path.write_text(json.dumps(data))
    return ["play", str(path), *extra]


def _names(text: str) -> str | None:
    return None if "symbolic link" in text else "the error does not name the broken link"


def _prose(outcome: Outcome) -> str | None:
    found = [t for t in PYTHON_TYPES if t in outcome.stdout]
    return f"help shows {', '.join(found)}" if found else None


def _help(*command: str) -> Case:
    return Case(f"{' '.join(command) or 'synth'} --help reads as prose", lambda _w: [*command, "--help"],
                expect_code=0, check=_prose)


CASES = [
    Case("verify a folder holding a broken link", _broken_link, expect_code=2,
         check=lambda o: _names(o.stderr)),
    Case("verify a broken link named directly", _direct_link, expect_code=2),
    Case("verify an empty .jsonl file", _empty_jsonl, expect_code=1),
    Case("play a package whose reference fails", _failing, expect_code=1),
    Case("play --json a package whose reference fails", lambda w: _failing(w, "--json"), expect_code=1),
    *(_help(*c) for c in [(), ("run",), ("regen",), ("verify",), ("play",), ("serve",), ("export",),
                          ("import",), ("catalog",), ("catalog", "query")]),
]
