"""People's decisions as regression data: the labelled packages in the layout of a labelled set
of ``tests/corpus`` that ``bench/precision.py`` reads.

A folder of bare package files (``<package id>.json``) and ``expected.tsv`` (``file``,
``expected`` accept/reject, ``code`` the defect's reason code, ``any`` when people named none, ``-``
for an accepted package, ``description``). A package goes in when the consensus of its rows'
labels (the majority of each annotator's latest label, ``audit_consensus``) is ``accept`` or
``defective``; ``unsure`` or ``disputed`` rows are left out, and so is a package whose rows people
decided differently (``conflicting``).
"""

from __future__ import annotations

import csv
import json
import os
import shutil
from pathlib import Path

from pydantic import Field

from pipeline.catalog.errors import CatalogError
from pipeline.catalog.selection import check_package_id
from pipeline.catalog.store import Catalog
from pipeline.core.strict_model import StrictModel
from pipeline.core.wording import counted

EXPECTED_COLUMNS = ("file", "expected", "code", "description")


class AuditExportSummary(StrictModel):
    path: str
    packages: int
    """Package files written (one per package id)."""
    accept: int
    reject: int
    skipped: dict[str, int] = Field(default_factory=dict)
    """Labelled rows left out, by reason: ``undecided`` (consensus unsure or disputed),
    ``conflicting`` (rows of one package decided differently), ``duplicate`` (another row of the
    same package, decided alike, was written)."""


def export_audit(catalog: Catalog | Path | str, out: Path | str) -> AuditExportSummary:
    """Write the packages people decided to the new or empty folder ``out`` (module docstring):
    built under a temporary name beside it and renamed when complete."""
    if not isinstance(catalog, Catalog):
        with Catalog.open(catalog, read_only=True) as opened:
            return export_audit(opened, out)
    out = Path(out)
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise CatalogError(f"--out {out} is not a new or empty folder; pass another path")
    result = catalog.query(
        "SELECT c.package_row, c.package_id, c.audit_label, c.audit_code, c.annotators, p.status, p.package, "
        "(SELECT string_agg(l.comment, ' / ' ORDER BY l.id) FROM audit_latest AS l "
        " WHERE l.package_row = c.package_row AND l.comment IS NOT NULL) AS comments "
        "FROM audit_consensus AS c JOIN packages AS p ON p.row_id = c.package_row "
        "WHERE p.package IS NOT NULL ORDER BY c.package_row", max_rows=None, timeout=None)
    skipped: dict[str, int] = {}
    chosen: dict[str, tuple[str, str | None, str, str]] = {}
    conflicting: set[str] = set()
    for _row, package_id, label, code, annotators, status, package, comments in result.rows:
        if label not in ("accept", "defective"):
            skipped["undecided"] = skipped.get("undecided", 0) + 1
            continue
        key = check_package_id(package_id, f"catalog row of package {package_id!r}")
        verifier = "accepted" if status == "accepted" else "refused"
        note = comments or f"{label} by {counted(annotators, 'annotator')}; the verifier {verifier} it"
        entry = (label, code, " ".join(str(note).split()), json.dumps(package, ensure_ascii=False, indent=2)
                 if not isinstance(package, str) else package)
        if key in chosen:
            if chosen[key][0] != label or chosen[key][1] != code:
                conflicting.add(key)
            skipped["duplicate"] = skipped.get("duplicate", 0) + 1
            continue
        chosen[key] = entry
    for key in conflicting:
        del chosen[key]
    if conflicting:
        skipped["conflicting"] = len(conflicting)
        skipped["duplicate"] -= len(conflicting)
        if not skipped["duplicate"]:
            del skipped["duplicate"]
    partial = out.with_name(f".{out.name}.partial")
    shutil.rmtree(partial, ignore_errors=True)
    try:
        partial.mkdir(parents=True)
        with (partial / "expected.tsv").open("w", encoding="utf-8", newline="") as handle:
            writer = csv.writer(handle, delimiter="\t", lineterminator="\n")
            writer.writerow(EXPECTED_COLUMNS)
            for key, (label, code, note, package) in chosen.items():
                (partial / f"{key}.json").write_text(_pretty(package), encoding="utf-8")
                expected = "accept" if label == "accept" else "reject"
                writer.writerow((f"{key}.json", expected, "-" if label == "accept" else code or "any", note))
        if out.exists():
            out.rmdir()
        os.replace(partial, out)
    except OSError as exc:
        raise CatalogError(f"cannot write {out}: {exc.strerror or exc}; pass --out in a folder you can write") from exc
    finally:
        shutil.rmtree(partial, ignore_errors=True)
    accepted = sum(1 for label, *_ in chosen.values() if label == "accept")
    return AuditExportSummary(path=str(out), packages=len(chosen), accept=accepted, reject=len(chosen) - accepted,
                              skipped=skipped)


def _pretty(package: str) -> str:
    return json.dumps(json.loads(package), ensure_ascii=False, indent=2) + "\n"
