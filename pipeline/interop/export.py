"""Exporting catalog rows as dataset files: the format registry and the atomic write.

Every format is a function of a ``Selection`` (``pipeline.catalog.selection``), a destination path
and the training policy that returns the number of rows written, or a summary model with a
``rows`` field whose other fields land in ``ExportSummary.details``. Adding a format is one module
with its function and one entry in ``FORMATS``.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
from collections.abc import Callable
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from pipeline.catalog.calibration import PassBand
from pipeline.catalog.errors import CatalogError
from pipeline.catalog.selection import Selection, StatusFilter
from pipeline.catalog.store import Catalog
from pipeline.core.package import PASS_SCORE, passes
from pipeline.core.paths import DEFAULT_CATALOG
from pipeline.core.strict_model import StrictModel
from pipeline.core.training_format import Policy
from pipeline.core.wording import counted
from pipeline.interop.clawenvkit_export import write_clawenvkit_tasks
from pipeline.interop.datasets import export_jsonl, export_parquet
from pipeline.interop.openenv_export import export_openenv
from pipeline.interop.rollout_sft import export_rollout_sft
from pipeline.interop.sft import export_sft

Exporter = Callable[[Selection, Path, Policy], int | BaseModel]
ProgressFn = Callable[[int, int], None]
"""Told ``(rows done, rows in all)`` as an export goes."""

OUTPUT_DIR = DEFAULT_CATALOG.parent
"""Where an export goes when no ``out`` is given: the folder of the default catalog, ``output/``."""


@dataclass(frozen=True)
class Format:
    """An export format: its ``write`` function, the name it writes under ``OUTPUT_DIR`` when no
    ``out`` is given, and whether it writes a ``folder`` of files rather than one file."""

    write: Exporter
    default_name: str
    folder: bool = False


FORMATS: dict[str, Format] = {
    "jsonl": Format(lambda selection, out, _policy: export_jsonl(selection, out), "packages.jsonl"),
    "parquet": Format(lambda selection, out, _policy: export_parquet(selection, out), "packages.parquet"),
    "sft": Format(export_sft, "sft.jsonl"),
    "clawenvkit": Format(lambda selection, out, _policy: write_clawenvkit_tasks(selection.packages(), out),
                         "clawenvkit", folder=True),
    "openenv": Format(export_openenv, "openenv", folder=True),
}
"""Format name → format. ``sft`` applies the training truncation policy (and reads each row's
stored ``sft_ready``); the others ignore it."""



Source = Literal["reference", "rollouts"]
RolloutExporter = Callable[[Selection, Path, Policy, float, "str | None"], BaseModel]
FROM_ROLLOUTS: dict[str, RolloutExporter] = {"sft": export_rollout_sft}
"""The formats ``source="rollouts"`` writes: format name → its writer of the selected packages'
passing rollouts (``min_score``, ``model``)."""


class ExportSummary(StrictModel):
    format: str
    path: str
    rows: int
    status: str
    where: str | None
    source: str = "reference"
    """What the samples come from: the packages' ``reference``, or their passing ``rollouts``."""
    pass_band: list[float] | None = None
    """``[LOW, HIGH]``: only packages whose pass rate for ``model`` lies in it were exported."""
    model: str | None = None
    audited: bool = False
    """Only rows people accepted (``synth audit``: the majority of annotators' latest labels) were exported."""
    details: dict[str, Any] = Field(default_factory=dict)


def default_out(fmt: str) -> Path:
    """Where format ``fmt`` is written when no ``out`` is given: ``output/<its default name>``."""
    return OUTPUT_DIR / _format(fmt).default_name


def _format(fmt: str) -> Format:
    if fmt not in FORMATS:
        raise CatalogError(f"unknown export format {fmt!r}; choose one of: {', '.join(FORMATS)}")
    return FORMATS[fmt]


def _check_out(fmt: str, spec: Format, out: Path) -> None:
    """Refuse an ``out`` the format cannot replace: a folder for a one-file format, a file or a
    folder holding files for a folder format."""
    if not spec.folder and out.is_dir():
        raise CatalogError(f"--out {out} is a folder; {fmt} writes one file: pass a file path such as "
                           f"{out / spec.default_name}")
    if spec.folder and out.exists() and not out.is_dir():
        raise CatalogError(f"--out {out} is a file; {fmt} writes a folder of files: pass a new or empty folder")
    if spec.folder and out.is_dir() and any(out.iterdir()):
        raise CatalogError(f"--out {out} already holds files; {fmt} writes a new folder: pass a new or empty "
                           "folder, or remove this one")


def _prepare(out: Path, partial: Path, folder: bool) -> None:
    """Create ``out``'s folder and the empty ``partial`` the format writes into, or say why not."""
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        if folder:
            partial.mkdir()
        else:
            partial.touch()
    except OSError as exc:
        raise CatalogError(f"cannot write {out}: {exc.strerror or exc}; pass --out in a folder you can write") from exc


def _discard(partial: Path) -> None:
    """Remove ``partial`` (a file or folder) if it is there and can be removed."""
    if partial.is_dir() and not partial.is_symlink():
        shutil.rmtree(partial, ignore_errors=True)
    else:
        with suppress(OSError):
            partial.unlink(missing_ok=True)


def export_catalog(catalog: Catalog | Path | str, fmt: str, out: Path | str | None = None, where: str | None = None,
                   status: StatusFilter = "accepted", policy: Policy | None = None,
                   on_progress: ProgressFn | None = None, pass_band: PassBand | str | None = None,
                   model: str | None = None, source: Source = "reference",
                   min_score: float | None = None, min_weight_share: float | None = None,
                   audited: bool = False, below_pass_line: bool = False) -> ExportSummary:
    """Write the catalog rows with ``status`` (accepted by default; ``all`` for every row) for
    which ``where`` holds to ``out`` (default ``output/<format's default name>``) in format
    ``fmt``, atomically; ``on_progress`` is told ``(rows done, rows in all)`` as it goes.

    ``pass_band`` (a ``PassBand``, or ``"LOW:HIGH"`` for ``model``) keeps only the packages whose
    pass rate for ``model`` lies in [LOW, HIGH] (``pipeline.catalog.calibration``), in every format.
    ``source="rollouts"`` (format ``sft`` only) writes the passing rollouts of the selected
    packages (score >= ``min_score``, default the pass threshold; of ``model`` only when given)
    in place of their reference trajectories (``interop.rollout_sft``).
    ``min_weight_share`` (format ``clawenvkit`` only, default 1.0): the least share of a package's
    grading weight a task file must carry (``interop.clawenvkit_export``); ``below_pass_line``
    (format ``clawenvkit`` only) writes a file only when every one of synth's wrong agents gets a
    final score below ClawEnvKit's 0.5 pass line there (else ``wrong_agent_passes_there``). ``audited`` keeps only
    the rows people accepted: the majority of their annotators' latest labels is ``accept``
    (``synth audit``; ``where`` may also name ``audit_label``).

    The output is written beside ``out`` under a temporary name and renamed over it once complete,
    so ``out`` is either the previous file or the whole new export, never a partial one. A
    one-file format refuses an ``out`` that is a folder; a folder format (``clawenvkit``) writes
    only to a new or empty folder. ``where`` runs sandboxed (``Catalog.selection``).
    ``CatalogError`` for an unknown format or status, a bad ``where``, ``out``, band, source or
    ``min_score``, and for an export that would write nothing (saying why: nothing selected, no
    passing rollout, every package left out by reason; ``clawenvkit_export.write_clawenvkit_tasks``
    for a ``clawenvkit`` one); nothing is then left at ``out``. ``catalog`` may be a path: it is then opened read-only for the export.
    """
    if not isinstance(catalog, Catalog):
        with Catalog.open(catalog, read_only=True) as opened:
            return export_catalog(opened, fmt, out, where, status, policy, on_progress, pass_band, model, source,
                                  min_score, min_weight_share, audited, below_pass_line)
    spec = _format(fmt)
    band = PassBand.parse(pass_band, model) if isinstance(pass_band, str) else pass_band
    write = _writer(fmt, spec, source, model, min_score, band)
    if min_weight_share is not None or below_pass_line:
        write = _clawenvkit_writer(fmt, min_weight_share, below_pass_line)
    out = default_out(fmt) if out is None else Path(out)
    if out.name in ("", ".", ".."):
        raise CatalogError(f"--out {out} names no file or folder; pass a path such as {default_out(fmt)}")
    _check_out(fmt, spec, out)
    partial = out.with_name(f".{out.name}.partial")
    _discard(partial)  # left by an export that was killed
    _prepare(out, partial, spec.folder)
    try:
        with catalog.selection(status, where, writable=None if spec.folder else partial, band=band,
                               audited=audited) as selection:
            total = selection.count()
            if on_progress is not None:
                on_progress(0, total)
                selection = dataclasses.replace(selection, on_row=lambda done: on_progress(done, total))
            try:
                outcome = write(selection, partial, policy or Policy())
            except OSError as exc:
                raise CatalogError(f"cannot write {out}: {exc.strerror or exc}; pass --out in a folder you can "
                                   "write with room to spare") from exc
            if on_progress is not None:
                on_progress(total, total)
        written = outcome.rows if isinstance(outcome, BaseModel) else outcome  # type: ignore[attr-defined]
        if written == 0:
            raise CatalogError(_nothing_written(fmt, total, outcome, status, where, band, audited, source, model))
        try:
            os.replace(partial, out)
        except OSError as exc:
            raise CatalogError(f"cannot replace {out}: {exc.strerror or exc}; pass another --out") from exc
    finally:
        _discard(partial)
    chosen = {"status": status, "where": where, "source": source,
              "pass_band": None if band is None else [band.low, band.high], "model": model, "audited": audited}
    if isinstance(outcome, BaseModel):
        details = outcome.model_dump(mode="json")
        details.pop("model", None)
        return ExportSummary(format=fmt, path=str(out), rows=details.pop("rows"), **chosen, details=details)
    return ExportSummary(format=fmt, path=str(out), rows=outcome, **chosen)


def _nothing_written(fmt: str, selected: int, outcome: Any, status: StatusFilter, where: str | None,
                     band: PassBand | None, audited: bool, source: Source, model: str | None) -> str:
    """Why an export wrote no row, for its one-line error: nothing selected (and by what), no
    passing rollout, or every selected package left out (by reason)."""
    if selected == 0:
        chosen = [f"--where {where!r}" if where else "", "people accepted" if audited else "",
                  f"a pass rate for {band.model} in {band.low:g}..{band.high:g}" if band else ""]
        by = " and ".join(c for c in chosen if c)
        rows = "row" if status == "all" else f"{status} row"
        return (f"no {fmt} written: the catalog has no {rows}{' matching ' + by if by else ''}; "
                "`synth catalog stats` shows what it holds")
    skipped = outcome.model_dump().get("skipped") if isinstance(outcome, BaseModel) else None
    if isinstance(skipped, dict) and skipped:
        reasons = ", ".join(f"{reason} {n:,}" for reason, n in skipped.items())
        if source == "rollouts":
            which = f"every passing rollout of the {counted(selected, 'package')} selected"
        else:
            which = "the package selected" if selected == 1 else f"each of the {selected:,} packages selected"
        return f"no {fmt} written: {which} was left out ({reasons})"
    if source == "rollouts":
        whose = f" of {model}" if model else ""
        return (f"no {fmt} written: the {selected:,} selected packages have no passing rollout{whose}; "
                "`synth rollout` plays them")
    return f"no {fmt} written: the {selected:,} selected rows gave no row"


def _clawenvkit_writer(fmt: str, share: float | None, below_pass_line: bool) -> Exporter:
    """The clawenvkit writer keeping tasks that carry at least ``share`` of their grading weight
    (None: 1.0) and, with ``below_pass_line``, only those every wrong agent fails there (final
    < 0.5); ``CatalogError`` for another format or a share outside [0, 1]."""
    if fmt != "clawenvkit":
        option = "--min-weight-share" if share is not None else "--below-their-pass-line"
        raise CatalogError(f"{option} applies to --format clawenvkit only, not {fmt}; leave it out")
    share = 1.0 if share is None else share
    if not 0.0 <= share <= 1.0:
        raise CatalogError(f"--min-weight-share {share:g}: pass a share between 0 and 1")
    return lambda selection, out, _policy: write_clawenvkit_tasks(selection.packages(), out, share, below_pass_line)


def _writer(fmt: str, spec: Format, source: Source, model: str | None, min_score: float | None,
            band: PassBand | None) -> Exporter:
    """What writes format ``fmt`` from ``source``, or ``CatalogError`` for a choice that does not fit."""
    if source == "reference":
        if min_score is not None:
            raise CatalogError("--min-score applies to --from rollouts only; add --from rollouts, or leave it out")
        if model is not None and band is None:
            raise CatalogError(f"--model {model} needs --pass-band LOW:HIGH or --from rollouts; add one, or "
                               "leave --model out")
        return spec.write
    if source != "rollouts":
        raise CatalogError(f"unknown --from {source!r}; choose reference or rollouts")
    if fmt not in FROM_ROLLOUTS:
        raise CatalogError(f"--from rollouts writes {', '.join(FROM_ROLLOUTS)} only, not {fmt}; pass --format sft")
    score = PASS_SCORE if min_score is None else min_score
    if not (passes(score) and score <= 1.0):
        raise CatalogError(f"--min-score {score:g}: SFT from rollouts takes passing rollouts only, and a rollout "
                           f"passes only with full marks ({PASS_SCORE:g}); leave --min-score out")
    rollout_writer = FROM_ROLLOUTS[fmt]
    return lambda selection, out, policy: rollout_writer(selection, out, policy, score, model)
