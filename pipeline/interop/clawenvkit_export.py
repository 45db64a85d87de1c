"""Synth packages as ClawEnvKit task YAML, one file per package (``synth export --format clawenvkit``).

A check with a ClawEnvKit equivalent becomes a scoring component (or a safety check); one without
(state checks, ``asked_user`` ...) is listed in the summary, in a comment at the top of the file
and under the file's ``synth.unmapped`` field. The mapping is documented in ``docs/clawenvkit.md``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, Field

from pipeline.catalog.errors import CatalogError
from pipeline.catalog.selection import check_package_id
from pipeline.core.matchers import is_operator
from pipeline.core.package import (
    AnswerContains,
    AnswerExcludes,
    AnswerMatches,
    AskStep,
    Called,
    CallStep,
    Order,
    SafetyRule,
    Step,
    TaskPackage,
)
from pipeline.interop.clawenvkit_format import UnmappedCheck

_NO_STATE = "ClawEnvKit grades calls and the final answer only; it has no check over the final state"
_NO_CASE = "case-sensitive; ClawEnvKit's output checks always ignore case"


class ExportedTask(BaseModel):
    package_id: str
    path: str
    mapped: int = Field(description="checks and safety rules written as ClawEnvKit checks")
    unmapped: list[UnmappedCheck] = Field(default_factory=list)


class ClawEnvKitSummary(BaseModel):
    out_dir: str
    tasks: list[ExportedTask] = Field(default_factory=list)

    @property
    def unmapped_count(self) -> int:
        return sum(len(t.unmapped) for t in self.tasks)


def _called_check(check: Called, package: TaskPackage) -> dict[str, Any] | str:
    tool = package.tool(check.tool)
    if tool is None:
        return f"names tool {check.tool!r}, which the package does not offer"
    base = {"service": tool.service, "action": tool.name}
    matchers: dict[str, Any] = check.args_match
    if not matchers:
        if check.max is None:
            if check.min == 1:
                return {"type": "audit_action_exists", **base}
            return {"type": "audit_count_gte", **base, "count": check.min}
        if check.max == check.min:
            return {"type": "audit_count_equals", **base, "count": check.min}
        return f"a call count in [{check.min}, {check.max}]: ClawEnvKit counts 'at least N' or 'exactly N'"
    if check.min != 1 or check.max is not None:
        return "ClawEnvKit cannot count calls whose arguments match"
    if not any(is_operator(m) for m in matchers.values()):
        if len(matchers) == 1:
            [(field, value)] = matchers.items()
            return {"type": "audit_field_equals", **base, "field": field, "value": value}
        return {"type": "audit_action_exists", **base, "field_match": dict(matchers)}
    if len(matchers) == 1:
        [(field, matcher)] = matchers.items()
        if "$contains" in matcher and isinstance(matcher["$contains"], str):
            return {"type": "audit_field_contains", **base, "field": field, "contains": matcher["$contains"]}
    return "ClawEnvKit matches arguments by equality or one substring only"


def _order_check(check: Order, package: TaskPackage) -> dict[str, Any] | str:
    tools = [package.tool(name) for name in check.tools]
    if any(t is None for t in tools):
        return "names a tool the package does not offer"
    services = sorted({t.service for t in tools if t is not None})
    if len(services) != 1:
        return f"ClawEnvKit's audit_sequence orders calls of one service; these span {', '.join(services)}"
    return {"type": "audit_sequence", "service": services[0], "actions": [{"action": n} for n in check.tools]}


def _answer_check(ctype: str, field: str) -> Callable[[Any, TaskPackage], dict[str, Any] | str]:
    def convert(check: AnswerContains | AnswerExcludes | AnswerMatches, _: TaskPackage) -> dict[str, Any] | str:
        if not check.ignore_case:
            return _NO_CASE
        value = check.pattern if isinstance(check, AnswerMatches) else list(check.values)
        return {"type": ctype, field: value}

    return convert


_EXPORT_CHECK: dict[str, Callable[[Any, TaskPackage], dict[str, Any] | str]] = {  # by kind: each takes its kind
    "called": _called_check,
    "order": _order_check,
    "answer_contains": _answer_check("keywords_present", "keywords"),
    "answer_excludes": _answer_check("keywords_absent", "keywords"),
    "answer_matches": _answer_check("pattern_match", "pattern"),
    "judge": lambda check, _: {"type": "llm_judge", "rubric": check.rubric},
    "state_count": lambda *_: _NO_STATE,
    "state_match": lambda *_: _NO_STATE,
    "state_unchanged": lambda *_: _NO_STATE,
    "asked_user": lambda *_: "ClawEnvKit tasks are single-turn: there is no simulated user to ask",
    "not_called": lambda *_: "ClawEnvKit has no scoring check for a call never attempted "
                             "(tool_not_called is a safety gate)",
}


def _safety_rule(rule: SafetyRule) -> dict[str, Any] | str:
    if rule.kind == "not_called":
        if rule.args_match:
            return "ClawEnvKit's tool_not_called cannot match arguments"
        return {"type": "tool_not_called", "tool_name": rule.tool}
    if rule.kind == "answer_excludes":
        return {"type": "keywords_not_in_output", "keywords": list(rule.values)} if rule.ignore_case else _NO_CASE
    return _NO_STATE


def _fixtures(package: TaskPackage) -> dict[str, Any]:
    """Single-service packages: ``{collection: records}``; several services: ``{service: {...}}``."""
    if len(package.services) == 1:
        return dict(package.initial_state.get(package.services[0], {}))
    return {s: dict(c) for s, c in package.initial_state.items()}


def _describe(step: Step) -> str:
    if isinstance(step, CallStep):
        return f"call {step.call} with {json.dumps(step.args, ensure_ascii=False)}"
    if isinstance(step, AskStep):
        return f"ask the user: {step.ask}"
    return f"answer: {step.answer}"


def to_clawenvkit(package: TaskPackage) -> tuple[dict[str, Any], list[UnmappedCheck]]:
    """The ClawEnvKit task document for a package, and the checks it could not carry over.

    Tool names are the package's tool names and serve as the audit ``action`` names; each tool
    keeps its parameter schema under an extra ``parameters`` field.
    """
    package_id = package.id or package.compute_id()
    components: list[dict[str, Any]] = []
    unmapped: list[UnmappedCheck] = []
    for check in package.checks:
        mapped = _EXPORT_CHECK[check.kind](check, package)
        if isinstance(mapped, str):
            unmapped.append(UnmappedCheck(id=check.id, kind=check.kind, weight=check.weight, reason=mapped))
        else:
            components.append({"name": check.id, "weight": check.weight, "check": mapped})
    safety: list[dict[str, Any]] = []
    for rule in package.safety:
        mapped = _safety_rule(rule)
        if isinstance(mapped, str):
            unmapped.append(UnmappedCheck(id=rule.id, kind=rule.kind, safety=True, reason=mapped))
        else:
            safety.append(mapped)
    task = {
        "task_id": package_id,
        "task_name": package.workflow.replace("-", " ").replace("_", " ").capitalize(),
        "category": package.capability,
        "difficulty": package.difficulty,
        "prompt": package.request.text,
        "fixtures": _fixtures(package),
        "tools": [{"name": t.name, "service": t.service, "endpoint": t.endpoint, "method": "POST",
                   "description": t.description, "parameters": t.parameters} for t in package.tools],
        "scoring_components": components,
        "safety_checks": safety,
        "reference_solution": [_describe(s) for s in package.reference],
        "synth": {"package_id": package_id, "workflow": package.workflow, "services": list(package.services),
                  "now": package.now, "unmapped": [u.model_dump() for u in unmapped]},
    }
    return task, unmapped


def _header(package_id: str, unmapped: list[UnmappedCheck]) -> str:
    lines = [f"# ClawEnvKit task exported by synth from package {package_id}."]
    if unmapped:
        lines.append("# Not carried over (no ClawEnvKit equivalent; also under synth.unmapped):")
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


def export_clawenvkit(packages: Iterable[TaskPackage], out_dir: Path) -> ClawEnvKitSummary:
    """Write ``<out_dir>/<task_id>.yaml`` per package (each file written whole or not at all).
    ``CatalogError`` for a package whose id is not a package id (``pkg-`` and 16 hex digits)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    summary = ClawEnvKitSummary(out_dir=str(out_dir))
    for package in packages:
        task, unmapped = to_clawenvkit(package)
        path = task_path(out_dir, task["task_id"])
        text = _header(task["task_id"], unmapped) + yaml.safe_dump(task, sort_keys=False, allow_unicode=True)
        partial = path.with_name(path.name + ".partial")
        partial.write_text(text, encoding="utf-8")
        os.replace(partial, path)
        mapped = len(task["scoring_components"]) + len(task["safety_checks"])
        summary.tasks.append(ExportedTask(package_id=task["task_id"], path=str(path), mapped=mapped,
                                          unmapped=unmapped))
    return summary


class LeftOut(BaseModel):
    """Checks of one kind left out of an export for one reason: how many, in how many tasks, and
    the weight they carried in all (safety rules carry none)."""

    kind: str
    reason: str
    checks: int
    tasks: int
    weight: float


class ClawEnvKitExport(BaseModel):
    """What ``synth export --format clawenvkit`` reports: task files written, checks carried over
    (``mapped``) and left out (``unmapped_checks``), and the left-out checks grouped by kind and reason."""

    rows: int
    mapped_checks: int
    unmapped_checks: int
    left_out: list[LeftOut] = Field(default_factory=list)


def export_clawenvkit_tasks(packages: Iterable[TaskPackage], out: Path) -> ClawEnvKitExport:
    """A folder of ClawEnvKit task YAML files, one per package."""
    summary = export_clawenvkit(packages, out)
    groups: dict[tuple[str, str], LeftOut] = {}
    for task in summary.tasks:
        for u in task.unmapped:
            kind = f"safety {u.kind}" if u.safety else u.kind
            group = groups.setdefault((kind, u.reason), LeftOut(kind=kind, reason=u.reason, checks=0, tasks=0,
                                                                weight=0.0))
            group.checks += 1
            group.weight = round(group.weight + u.weight, 6)
        for kind, reason in {(f"safety {u.kind}" if u.safety else u.kind, u.reason) for u in task.unmapped}:
            groups[(kind, reason)].tasks += 1
    left_out = sorted(groups.values(), key=lambda g: (-g.checks, g.kind, g.reason))
    return ClawEnvKitExport(rows=len(summary.tasks), mapped_checks=sum(t.mapped for t in summary.tasks),
                            unmapped_checks=summary.unmapped_count, left_out=left_out)
