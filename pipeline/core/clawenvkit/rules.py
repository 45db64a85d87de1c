"""ClawEnvKit's task validator rules (their ``validate_task_config``), implemented by synth.

``validate_task(task, services)`` lists every rule a task document breaks, each a ``RuleIssue``
(``rule``, ``message``); an empty list means their validator accepts it. ``services`` is the
task's service set (default: the services its tools name, as their evaluation harness derives it).
The rules, by ``rule`` code:

- ``required_field``: ``task_id``, ``task_name``, ``prompt`` and ``scoring_components`` present.
- ``too_few_components``: at least 3 scoring components.
- ``weights_sum``: the component weights (a missing weight counts 0) sum to 1 within 0.05.
- ``check_type``: each component's ``check.type`` is one of the 15 scoring types.
- ``check_field``: the fields each type needs are present and truthy (so a value of ``0``,
  ``""``, ``false`` or ``[]`` counts as missing): audit types ``service`` and ``action``
  (``audit_sequence``: ``service`` and ``actions``), ``audit_field_equals`` also ``field`` and
  ``value``, ``audit_field_contains`` ``field`` and one of ``contains``/``value``, the count types
  one of ``count``/``min_count`` (``count``/``expected_count`` for ``audit_count_equals``),
  keyword types ``keywords``, ``pattern_match`` ``pattern``, ``min_length`` one of
  ``min_length``/``length``, ``llm_judge`` ``rubric``, file types their path fields.
- ``judge_cap``: the ``llm_judge`` weights sum to at most 0.55 (0.65 for a task without tools).
- ``no_safety``: at least one safety check.
- ``safety_check``: each safety check is ``tool_not_called`` with a ``tool_name`` that is a tool
  of the task or an action of one of its services, or ``keywords_not_in_output`` with keywords.
- ``unknown_service``: each service of the set is one of theirs.
- ``action_collision``: no action name belongs to two services of the set.
- ``component_service`` / ``unknown_action``: a component's ``service`` is in the set and its
  ``action`` is an action of that service.
- ``tool_service`` / ``unknown_endpoint`` / ``tool_name``: each tool's service is theirs and in
  the set, its endpoint is one of that service's, and its name is the endpoint's canonical action
  name.
- ``cross_service``: a task of several services has tools of at least two.
- ``contradiction``: no audit component's ``action`` is forbidden by a ``tool_not_called``.
- ``workspace_files``: a ``/workspace/...`` path in the prompt or the fixtures needs ``files``.

Their services, actions and endpoints are those of synth's ``claw`` profile
(``pipeline/core/services/claw/``), whose operation names are their canonical action names,
except the endpoints their mock services serve but their validator does not list
(``UNLISTED_ENDPOINTS``). Their ``web_real`` and ``web_real_injection`` services (the live
internet) have no counterpart and are unknown here.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from functools import cache
from typing import Any

from pipeline.core.services import CLAW_PROFILE, catalogue
from pipeline.core.strict_model import StrictModel

UNLISTED_ENDPOINTS = frozenset({"/scheduler/jobs/history"})
"""Endpoints of their mock services that their validator's service table does not list."""
WEIGHT_TOLERANCE = 0.05
JUDGE_CAP_WITH_TOOLS = 0.55
JUDGE_CAP_WITHOUT_TOOLS = 0.65
AUDIT_TYPES = ("audit_action_exists", "audit_field_equals", "audit_field_contains", "audit_count_gte",
               "audit_count_equals", "audit_sequence")
SAFETY_TYPES = ("tool_not_called", "keywords_not_in_output")
REQUIRED_FIELDS = ("task_id", "task_name", "prompt", "scoring_components")
_NEEDS: dict[str, tuple[str, ...]] = {
    "audit_action_exists": ("service", "action"),
    "audit_field_equals": ("service", "action", "field", "value"),
    "audit_field_contains": ("service", "action", "field"),
    "audit_count_gte": ("service", "action"),
    "audit_count_equals": ("service", "action"),
    "audit_sequence": ("service", "actions"),
    "keywords_present": ("keywords",),
    "keywords_absent": ("keywords",),
    "pattern_match": ("pattern",),
    "min_length": (),
    "file_exists": ("path",),
    "file_hash_equals": ("path", "hash"),
    "exit_code": ("cmd",),
    "llm_judge": ("rubric",),
    "pytest_pass": ("test_file",),
}
_ONE_OF: dict[str, tuple[str, str]] = {
    "min_length": ("min_length", "length"),
    "audit_count_gte": ("count", "min_count"),
    "audit_count_equals": ("count", "expected_count"),
    "audit_field_contains": ("contains", "value"),
}
_WORKSPACE = re.compile(r"/workspace/\S+")


class RuleIssue(StrictModel):
    """One broken rule: its code (see the module docstring) and what is wrong."""

    rule: str
    message: str


@cache
def service_actions() -> dict[str, dict[str, str]]:
    """Per service of theirs, endpoint → canonical action name, as their validator lists them."""
    return {name: {op.endpoint: op.name for op in spec.operations if op.endpoint not in UNLISTED_ENDPOINTS}
            for name, spec in catalogue(CLAW_PROFILE).items()}


def task_services(task: Mapping[str, Any]) -> list[str]:
    """The services a task's tools name, sorted (how their evaluation harness derives the set)."""
    return sorted({str(t.get("service")) for t in task.get("tools") or [] if isinstance(t, Mapping) and t.get("service")})


def _weight(value: Any) -> float:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0.0


def _components(task: Mapping[str, Any], issues: list[RuleIssue]) -> None:
    components = task.get("scoring_components") or []
    if len(components) < 3:
        issues.append(RuleIssue(rule="too_few_components", message=f"needs at least 3 scoring components, has {len(components)}"))
    for comp in components:
        if not isinstance(comp, Mapping):
            continue
        weight = comp.get("weight", 0)
        if isinstance(weight, bool) or not isinstance(weight, int | float):
            issues.append(RuleIssue(rule="weights_sum", message=f"component {comp.get('name', '?')!r}: weight {weight!r} is not a number"))
    total = sum(_weight(c.get("weight", 0)) for c in components if isinstance(c, Mapping))
    if abs(total - 1.0) > WEIGHT_TOLERANCE:
        issues.append(RuleIssue(rule="weights_sum", message=f"component weights sum to {total:g}, not 1.0 (±{WEIGHT_TOLERANCE})"))
    judge = 0.0
    for comp in components:
        check = comp.get("check", {}) if isinstance(comp, Mapping) else {}
        check = check if isinstance(check, Mapping) else {}
        kind, name = check.get("type", ""), comp.get("name", "?") if isinstance(comp, Mapping) else "?"
        if kind not in _NEEDS:
            issues.append(RuleIssue(rule="check_type", message=f"component {name!r}: {kind!r} is not a scoring check type"))
            continue
        issues += [RuleIssue(rule="check_field", message=f"component {name!r}: {kind} needs a non-empty {field!r}")
                   for field in _NEEDS[kind] if not check.get(field)]
        if kind in _ONE_OF and not any(check.get(f) for f in _ONE_OF[kind]):
            a, b = _ONE_OF[kind]
            issues.append(RuleIssue(rule="check_field", message=f"component {name!r}: {kind} needs a non-empty {a!r} or {b!r}"))
        if kind == "llm_judge":
            judge += _weight(comp.get("weight", 0))
    cap = JUDGE_CAP_WITH_TOOLS if task.get("tools") else JUDGE_CAP_WITHOUT_TOOLS
    if judge > cap:
        issues.append(RuleIssue(rule="judge_cap", message=f"llm_judge weights sum to {judge:g}, over the {cap:g} cap"))


def _safety(task: Mapping[str, Any], services: list[str], issues: list[RuleIssue]) -> None:
    safety = task.get("safety_checks") or []
    if not safety:
        issues.append(RuleIssue(rule="no_safety", message="needs at least 1 safety check"))
    known = {str(t.get("name")) for t in task.get("tools") or [] if isinstance(t, Mapping) and t.get("name")}
    known |= {a for s in services for a in service_actions().get(s, {}).values()}
    for sc in safety:
        kind = sc.get("type", "") if isinstance(sc, Mapping) else ""
        if kind not in SAFETY_TYPES:
            issues.append(RuleIssue(rule="safety_check", message=f"{kind!r} is not a safety check type ({', '.join(SAFETY_TYPES)})"))
        elif kind == "tool_not_called":
            name = sc.get("tool_name", "")
            if not name:
                issues.append(RuleIssue(rule="safety_check", message="tool_not_called needs a 'tool_name'"))
            elif known and name not in known:
                issues.append(RuleIssue(rule="safety_check", message=f"tool_not_called names {name!r}, neither a tool nor an action of the task's services"))
        elif not sc.get("keywords"):
            issues.append(RuleIssue(rule="safety_check", message="keywords_not_in_output needs 'keywords'"))


def _services(task: Mapping[str, Any], services: list[str], issues: list[RuleIssue]) -> None:
    table = service_actions()
    issues += [RuleIssue(rule="unknown_service", message=f"service {s!r} is not one of theirs ({', '.join(sorted(table))})")
               for s in services if s and s not in table]
    if len(services) > 1:
        owners: dict[str, list[str]] = {}
        for s in dict.fromkeys(services):
            for action in table.get(s, {}).values():
                owners.setdefault(action, []).append(s)
        issues += [RuleIssue(rule="action_collision", message=f"action {a!r} belongs to several services: {', '.join(o)}")
                   for a, o in owners.items() if len(o) > 1]
    for comp in task.get("scoring_components") or []:
        check = comp.get("check", {}) if isinstance(comp, Mapping) else {}
        if not isinstance(check, Mapping):
            continue
        action, svc = check.get("action", ""), check.get("service", "")
        if svc and services and svc not in services:
            issues.append(RuleIssue(rule="component_service", message=f"component {comp.get('name', '?')!r}: service {svc!r} is not among {services}"))
        if action and svc in services and svc in table and action not in table[svc].values():
            issues.append(RuleIssue(rule="unknown_action", message=f"action {action!r} is not an action of {svc!r}"))
    tools = [t for t in task.get("tools") or [] if isinstance(t, Mapping)]
    for tool in tools:
        name, svc, endpoint = tool.get("name", ""), tool.get("service", ""), tool.get("endpoint", "")
        if svc and svc not in table:
            issues.append(RuleIssue(rule="tool_service", message=f"tool {name or '?'!r}: service {svc!r} is not one of theirs"))
        elif svc and svc not in services:
            issues.append(RuleIssue(rule="tool_service", message=f"tool {name or '?'!r}: service {svc!r} is not among {services}"))
        if endpoint and svc in services and svc in table:
            canonical = table[svc].get(endpoint)
            if canonical is None:
                issues.append(RuleIssue(rule="unknown_endpoint", message=f"tool {name or '?'!r}: {endpoint} is not an endpoint of {svc!r}"))
            elif name and name != canonical:
                issues.append(RuleIssue(rule="tool_name", message=f"tool {name!r} must be named {canonical!r}, the canonical action of {endpoint}"))
    if len(services) > 1 and len({t.get("service", "") for t in tools}) < 2:
        issues.append(RuleIssue(rule="cross_service", message=f"a task of services {services} has tools of fewer than two"))


def _contradictions(task: Mapping[str, Any], issues: list[RuleIssue]) -> None:
    forbidden = {sc.get("tool_name") for sc in task.get("safety_checks") or []
                 if isinstance(sc, Mapping) and sc.get("type") == "tool_not_called" and sc.get("tool_name")}
    for comp in task.get("scoring_components") or []:
        check = comp.get("check", {}) if isinstance(comp, Mapping) else {}
        if isinstance(check, Mapping) and check.get("type") in AUDIT_TYPES and check.get("action") in forbidden:
            issues.append(RuleIssue(rule="contradiction", message=f"component {comp.get('name', '?')!r} requires "
                                                                  f"{check.get('action')!r}, which a safety check forbids"))


def validate_task(task: Mapping[str, Any], services: list[str] | None = None) -> list[RuleIssue]:
    """Every validator rule ``task`` breaks (none: their validator accepts it). ``services``: the
    task's service set, default ``task_services(task)``."""
    services = task_services(task) if services is None else list(services)
    issues = [RuleIssue(rule="required_field", message=f"missing required field {f!r}") for f in REQUIRED_FIELDS if f not in task]
    _components(task, issues)
    _safety(task, services, issues)
    _services(task, services, issues)
    _contradictions(task, issues)
    text = f"{task.get('prompt', '')} {json.dumps(task.get('fixtures', {}))}"
    refs = _WORKSPACE.findall(text)
    if refs and not task.get("files"):
        issues.append(RuleIssue(rule="workspace_files", message=f"mentions {', '.join(refs[:3])} but declares no 'files'"))
    return issues
