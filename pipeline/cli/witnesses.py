"""Reading the witness ``synth play FILE --witness W`` replays.

``W`` is a JSON file holding a witness, a finding (its ``witness``), a verdict, the output of
``synth verify --json`` (JSON lines, one verdict per package) or of ``synth catalog show --json``
(a list of rows, each with its findings and their ``kind``). From verdicts, the one of the
package being played is taken (its ``id`` is the package's computed id), or the only one; from a
verdict, the ``index``-th refusal that has a witness. Anything else is a ``UserError`` (exit 2).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from pipeline import Witness
from pipeline.core.errors import UserError, first_validation_error
from pipeline.core.jsonvalues import ShapeError, parse_json
from pipeline.core.wording import counted


@dataclass(frozen=True)
class ChosenWitness:
    """A witness and where it came from: ``finding`` (``code``, ``message``) is the finding it
    proves, when ``W`` said; ``index`` and ``of`` its place among the verdict's witnessed refusals;
    ``verdict_id`` the id of the verdict it came from, when it came from one."""

    witness: Witness
    finding: dict[str, Any] | None = None
    """``code``, ``message``, and ``claim`` / ``reading`` when it has them."""
    index: int | None = None
    of: int | None = None
    verdict_id: str | None = None

    def describe(self) -> str | None:
        """Which finding this is, in one line (None for a bare witness)."""
        if self.finding is None:
            return None
        place = "" if self.index is None else f"refusal {self.index} of {self.of} with a witness: "
        return f"{place}{self.finding.get('code')}: {self.finding.get('message')}"


def read_witness(path: Path, package_id: str, index: int = 0) -> ChosenWitness:
    """The witness ``path`` holds for package ``package_id`` (see the module docstring); the
    ``index``-th witnessed refusal when it holds verdicts."""
    docs = _documents(path)
    if len(docs) == 1 and isinstance(docs[0], dict) and ("code" in docs[0] or "agent" in docs[0]):
        if index:
            raise UserError(f"--finding {index}: {path} holds one witness, not a verdict; drop --finding")
        return _single(path, docs[0])
    verdicts = [d for d in docs if isinstance(d, dict) and isinstance(d.get("findings"), list)]
    if len(verdicts) != len(docs) or not verdicts:
        raise UserError(f"{path}: not a witness, a finding, a verdict, nor the output of `synth verify --json` "
                        "or `synth catalog show --json`")
    verdict = _verdict_of(path, verdicts, package_id)
    witnessed = _witnessed_refusals(verdict)
    vid = str(verdict.get("id"))
    if not witnessed:
        raise UserError(f"{path}: the verdict of {vid} has no refusal with a witness; nothing to replay")
    if not 0 <= index < len(witnessed):
        choices = "0" if len(witnessed) == 1 else f"0 to {len(witnessed) - 1}"
        raise UserError(f"--finding {index}: the verdict of {vid} has {counted(len(witnessed), 'refusal')} with a witness; "
                        f"pass --finding {choices}")
    finding = witnessed[index]
    return ChosenWitness(_witness(path, finding["witness"], f"refusal {index}'s witness"),
                         _about(finding), index, len(witnessed), vid)


def _documents(path: Path) -> list[Any]:
    """The JSON document in ``path``, or its JSON lines; a list document is its items."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise UserError(f"{path}: no such file; pass a witness, a finding or a verdict as JSON") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise UserError(f"{path}: cannot read ({exc}); pass a UTF-8 JSON file") from exc
    try:
        whole = parse_json(text)
    except ShapeError as exc:
        raise UserError(f"{path}: JSON {exc}") from None
    except json.JSONDecodeError:
        lines = [line for line in text.splitlines() if line.strip()]
        if len(lines) < 2:
            raise UserError(f"{path}: not valid JSON; pass a witness, a finding or a verdict as JSON") from None
        docs = []
        for n, line in enumerate(lines, 1):
            try:
                docs.append(parse_json(line))
            except (json.JSONDecodeError, ShapeError):
                raise UserError(f"{path}: not JSON, nor JSON lines (line {n} is not JSON)") from None
        return docs
    return whole if isinstance(whole, list) else [whole]


def _single(path: Path, doc: dict[str, Any]) -> ChosenWitness:
    """A witness object, or a finding object carrying one."""
    if "code" in doc:
        if not doc.get("witness"):
            raise UserError(f"{path}: the finding ({doc.get('code')}) has no witness; nothing to replay")
        return ChosenWitness(_witness(path, doc["witness"], "the finding's witness"), _about(doc))
    return ChosenWitness(_witness(path, doc, "the witness"))


def _about(finding: dict[str, Any]) -> dict[str, Any]:
    return {k: finding.get(k) for k in ("code", "message", "claim", "reading")}


def _witness(path: Path, data: Any, what: str) -> Witness:
    try:
        return Witness.model_validate(data)
    except ValidationError as exc:
        raise UserError(f"{path}: {what} is not a witness: {first_validation_error(exc)}") from None


def _verdict_of(path: Path, verdicts: list[dict[str, Any]], package_id: str) -> dict[str, Any]:
    """The verdict of ``package_id`` among ``verdicts``, or the only verdict."""
    mine = [v for v in verdicts if v.get("id") == package_id]
    if len(mine) > 1:
        with_witness = [v for v in mine if _witnessed_refusals(v)]
        if len(with_witness) > 1:
            rows = ", ".join(str(v.get("row_id")) for v in with_witness if v.get("row_id") is not None)
            raise UserError(f"{path}: {len(with_witness)} verdicts of {package_id} have witnesses; keep one"
                            + (f" (catalog rows {rows}: `synth catalog show ROW --json`)" if rows else ""))
        return (with_witness or mine)[0]
    if mine:
        return mine[0]
    if len(verdicts) == 1:
        return verdicts[0]
    ids = ", ".join(str(v.get("id")) for v in verdicts[:5])
    raise UserError(f"{path}: no verdict of {package_id} among its {len(verdicts)} ({ids}"
                    f"{', ...' if len(verdicts) > 5 else ''}); pass the verdicts of this package")


def _witnessed_refusals(verdict: dict[str, Any]) -> list[dict[str, Any]]:
    """The refusals of a verdict (a catalog row's findings of kind ``refusal``) that carry a witness."""
    return [f for f in verdict["findings"]
            if isinstance(f, dict) and f.get("kind", "refusal") == "refusal" and f.get("witness")]
