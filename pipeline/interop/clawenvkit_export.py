"""Synth packages as ClawEnvKit task YAML that their validator, services and grader accept
(``synth export --format clawenvkit``), one file per package, or a refusal with its reason.

``pipeline.core.clawenvkit.translation`` makes the task document and grades it under their rules
(``translate``, ``assess``); this module writes the files that pass, one whole file per package,
and sums them up. Every refusal is a ``Refusal`` with a stable ``reason`` code (``REASONS``).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import yaml
from pydantic import Field

from pipeline.catalog.errors import CatalogError
from pipeline.catalog.selection import check_package_id
from pipeline.core.clawenvkit.format import UnmappedCheck
from pipeline.core.clawenvkit.translation import REASONS, Assessment, assess, translate
from pipeline.core.package import TaskPackage
from pipeline.core.strict_model import StrictModel
from pipeline.verify.exportable import wrong_agents

__all__ = ["REASONS", "ClawEnvKitExport", "ClawEnvKitSummary", "ExportedTask", "Refusal", "export_clawenvkit",
           "export_clawenvkit_tasks", "export_one", "task_path"]


class Refusal(StrictModel):
    """A package not exported: its reason code (``REASONS``), the details, and the share of its
    grading weight a translation would carry."""

    package_id: str
    reason: str
    detail: str
    share: float


class ExportedTask(StrictModel):
    """A task file written: the share of the package's grading weight it carries, what it left
    out, whether a safety check was added, and its grades under ClawEnvKit's rules."""

    package_id: str
    path: str
    share: float
    components: int
    safety_checks: int
    added_safety: str | None = None
    """The safety check added because none of the package's safety rules translated (its tool)."""
    unmapped: list[UnmappedCheck] = Field(default_factory=list)
    reference_completion: float
    null_completion: float
    null_final: float
    wrong_agents: int = 0
    """How many of synth's wrong agents were played through their grader on the file."""
    best_wrong_agent: str | None = None
    """The wrong agent with the highest final score there (none played: None)."""
    best_wrong_final: float | None = None
    wrong_agents_passing: int = 0
    """How many reach their pass threshold (final ≥ 0.5): their grader gives partial credit."""


class ClawEnvKitSummary(StrictModel):
    out_dir: str
    min_weight_share: float
    below_pass_line: bool = False
    tasks: list[ExportedTask] = Field(default_factory=list)
    refused: list[Refusal] = Field(default_factory=list)


def _header(task: dict[str, Any], unmapped: list[UnmappedCheck]) -> str:
    synth = task["synth"]
    lines = [f"# ClawEnvKit task exported by synth from package {task['task_id']}; it carries "
             f"{synth['weight_share']:.2f} of the package's grading weight."]
    played = synth["wrong_agents"]
    if played["played"]:
        lines.append(f"# synth's wrong agents in ClawEnvKit's grader: {played['played']} played, {played['passing']} at "
                     f"or above their 0.5 line; the best, {played['best']}, scores final {played['best_final']:.2f} "
                     f"(a do-nothing agent {synth['null_agent']['final']:.2f}).")
    if synth["added_safety"]:
        lines.append(f"# Safety check added by the export: tool_not_called {synth['added_safety']}.")
    if unmapped:
        lines.append("# Not carried over (also under synth.unmapped):")
        for u in unmapped:
            what = "safety rule" if u.safety else f"weight {u.weight:g}"
            lines.append(f"#   - {u.id} ({u.kind}, {what}): {u.reason}")
    return "\n".join(lines) + "\n"


def task_path(out_dir: Path, package_id: str) -> Path:
    """``<out_dir>/<package_id>.yaml``, once ``package_id`` is checked to be a package id and the
    path to stay inside ``out_dir`` (the id comes from data: a catalog row, a package file)."""
    check_package_id(package_id, "clawenvkit export")
    path = out_dir / f"{package_id}.yaml"
    if path.resolve().parent != out_dir.resolve():
        raise CatalogError(f"clawenvkit export: {path} would land outside {out_dir}; pass a plain --out folder")
    return path


def _write_atomic(path: Path, data: bytes) -> None:
    """``data`` at ``path`` (folders made), whole or not at all."""
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".partial")
    partial.write_bytes(data)
    os.replace(partial, path)


def export_one(package: TaskPackage, out_dir: Path, min_weight_share: float = 1.0, below_pass_line: bool = False
               ) -> ExportedTask | Refusal:
    """Translate, check and grade one package; write ``<out_dir>/<package id>.yaml`` (whole or not
    at all) when it passes, else return its ``Refusal``. ``below_pass_line``: also refuse it
    (``wrong_agent_passes_there``) when one of synth's wrong agents gets final ≥ 0.5 there."""
    package_id = package.id or package.compute_id()
    check_package_id(package_id, "clawenvkit export")
    translation = translate(package, min_weight_share)
    if translation.task is None:
        reason, detail = translation.refusal or ("rules", "")
        return Refusal(package_id=package_id, reason=reason, detail=detail, share=translation.share)
    task = translation.task
    verdict = assess(package, task, translation.reference, wrong_agents(package))
    refusal = verdict.refusal
    if refusal is not None and not (refusal[0] == "wrong_agent_passes" and min_weight_share < 1.0 - 1e-9):
        reason, detail = refusal  # a partial file asked for keeps the wrong agents its lost checks let through
        return Refusal(package_id=package_id, reason=reason, detail=detail, share=translation.share)
    if below_pass_line and (over := verdict.pass_line_refusal) is not None:
        return Refusal(package_id=package_id, reason=over[0], detail=over[1], share=translation.share)
    best = verdict.best_wrong
    task["synth"]["reference_completion"] = round(verdict.reference_completion, 6)
    task["synth"]["null_agent"] = {"completion": round(verdict.null_completion, 6),
                                   "final": round(verdict.null_final, 6)}
    task["synth"]["wrong_agents"] = _wrong_agents_field(verdict)
    path = task_path(out_dir, package_id)
    plain = json.loads(json.dumps(task))  # no shared objects, so the YAML has no anchors or aliases
    text = _header(task, translation.unmapped) + yaml.safe_dump(plain, sort_keys=False, allow_unicode=True)
    for source, data in translation.files.items():
        _write_atomic(path.parent / source, data)
    _write_atomic(path, text.encode("utf-8"))
    return ExportedTask(package_id=package_id, path=str(path), share=translation.share,
                        components=len(task["scoring_components"]), safety_checks=len(task["safety_checks"]),
                        added_safety=translation.added_safety, unmapped=translation.unmapped,
                        reference_completion=verdict.reference_completion, null_completion=verdict.null_completion,
                        null_final=verdict.null_final, wrong_agents=len(verdict.wrong),
                        best_wrong_agent=best.name if best else None, best_wrong_final=best.final if best else None,
                        wrong_agents_passing=sum(w.passes for w in verdict.wrong))


def _wrong_agents_field(verdict: Assessment) -> dict[str, Any]:
    """``synth.wrong_agents`` of a file: how many of synth's wrong agents were played through their
    grader, how many reach their 0.5 line, and the best one with its completion and final score."""
    best = verdict.best_wrong
    return {"played": len(verdict.wrong), "passing": sum(w.passes for w in verdict.wrong),
            "best": best.name if best else None, "best_completion": best.completion if best else None,
            "best_final": best.final if best else None}


def export_clawenvkit(packages: Iterable[TaskPackage], out_dir: Path, min_weight_share: float = 1.0,
                      below_pass_line: bool = False) -> ClawEnvKitSummary:
    """Export every package (``export_one``) into ``out_dir``. ``CatalogError`` for a package id
    that is not one (``pkg-`` and 16 hex digits) or a share outside [0, 1]."""
    if not 0.0 <= min_weight_share <= 1.0:
        raise CatalogError(f"--min-weight-share {min_weight_share:g}: pass a share between 0 and 1")
    out_dir.mkdir(parents=True, exist_ok=True)
    summary = ClawEnvKitSummary(out_dir=str(out_dir), min_weight_share=min_weight_share,
                                below_pass_line=below_pass_line)
    for package in packages:
        outcome = export_one(package, out_dir, min_weight_share, below_pass_line)
        if isinstance(outcome, ExportedTask):
            summary.tasks.append(outcome)
        else:
            summary.refused.append(outcome)
    return summary


class FileShare(StrictModel):
    """One file written, the share of its package's grading weight it carries, and what their
    grader gives a do-nothing agent and the best of synth's wrong agents (final scores)."""

    package_id: str
    file: str
    share: float
    added_safety: str | None = None
    null_final: float
    best_wrong_agent: str | None = None
    best_wrong_final: float | None = None
    wrong_agents: int = 0
    wrong_agents_passing: int = 0
    """Wrong agents at or above their 0.5 line (partial credit), of ``wrong_agents`` played."""


class ClawEnvKitExport(StrictModel):
    """What ``synth export --format clawenvkit`` reports: files written (``rows``) with the share
    of grading weight each carries, packages refused by reason, and the mean shares (over the
    files written; over every package, the refused counting their would-be share)."""

    rows: int
    packages: int
    refused: int
    min_weight_share: float
    below_pass_line: bool = False
    """``--below-their-pass-line``: a file only when every wrong agent stays below final 0.5 there."""
    refused_at_pass_line: int = 0
    """Packages that option refused (``wrong_agent_passes_there``): 0 when it is off."""
    refused_by_reason: dict[str, int] = Field(default_factory=dict)
    mean_share_exported: float
    mean_share_all: float
    files: list[FileShare] = Field(default_factory=list)
    refusals: list[Refusal] = Field(default_factory=list)


def write_clawenvkit_tasks(packages: Iterable[TaskPackage], out: Path, min_weight_share: float = 1.0,
                           below_pass_line: bool = False) -> ClawEnvKitExport:
    """``export_clawenvkit_tasks`` for ``synth export``: ``CatalogError`` saying why when it writes
    no task file (the selection is empty, or every package in it is refused), so that an export
    writing nothing fails instead of reporting an empty folder."""
    report = export_clawenvkit_tasks(packages, out, min_weight_share, below_pass_line)
    if report.rows:
        return report
    if not report.packages:
        raise CatalogError("no ClawEnvKit task written: the selection holds no package; "
                           "`synth catalog stats` shows what the catalog holds")
    reasons = ", ".join(f"{reason} {n:,}" for reason, n in report.refused_by_reason.items())
    first = next(iter(report.refused_by_reason))
    which = "the package" if report.packages == 1 else f"each of the {report.packages:,} packages"
    raise CatalogError(f"no ClawEnvKit task written: {which} selected was refused ({reasons}); {first}: {REASONS[first]}")


def export_clawenvkit_tasks(packages: Iterable[TaskPackage], out: Path, min_weight_share: float = 1.0,
                            below_pass_line: bool = False) -> ClawEnvKitExport:
    """A folder of ClawEnvKit task YAML files, one per package exported, and the report."""
    summary = export_clawenvkit(packages, out, min_weight_share, below_pass_line)
    shares = [t.share for t in summary.tasks]
    every = shares + [r.share for r in summary.refused]
    by_reason: dict[str, int] = {}
    for r in summary.refused:
        by_reason[r.reason] = by_reason.get(r.reason, 0) + 1
    return ClawEnvKitExport(
        rows=len(summary.tasks), packages=len(every), refused=len(summary.refused), min_weight_share=min_weight_share,
        below_pass_line=below_pass_line, refused_at_pass_line=by_reason.get("wrong_agent_passes_there", 0),
        refused_by_reason=dict(sorted(by_reason.items(), key=lambda kv: (-kv[1], kv[0]))),
        mean_share_exported=round(sum(shares) / len(shares), 6) if shares else 0.0,
        mean_share_all=round(sum(every) / len(every), 6) if every else 0.0,
        files=[FileShare(package_id=t.package_id, file=Path(t.path).name, share=t.share, added_safety=t.added_safety,
                         null_final=round(t.null_final, 6), best_wrong_agent=t.best_wrong_agent,
                         best_wrong_final=t.best_wrong_final, wrong_agents=t.wrong_agents,
                         wrong_agents_passing=t.wrong_agents_passing) for t in summary.tasks],
        refusals=summary.refused)
