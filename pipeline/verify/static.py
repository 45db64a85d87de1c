"""Static consistency: what can be proven wrong without running anything but the reference once.

Codes raised here: ``unknown_endpoint``, ``unknown_tool``, ``tool_schema_mismatch``,
``dangling_reference``, ``weights_invalid``, ``judge_overweight``.
"""

from __future__ import annotations

import re
from typing import Any

from pipeline.core.codes import Code
from pipeline.core.matchers import check_literals
from pipeline.core.outcomes import Finding
from pipeline.core.package import JUDGE_MAX_WEIGHT, CallStep, TaskPackage
from pipeline.core.references import ResolveError, iter_refs, parse_ref
from pipeline.core.services import (
    CLAW_PROFILE,
    catalogue,
    default_tool_name,
    find_operation,
    get_service,
    id_shapes,
    record_id_field,
)
from pipeline.core.trajectory import Trajectory

WEIGHT_TOLERANCE = 1e-6
_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[A-Za-z]{2,}$")
_EMAIL_IN_TEXT = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")


def tool_findings(package: TaskPackage) -> list[Finding]:
    """Every tool bound to a real operation of a declared service, with compatible parameters."""
    out: list[Finding] = []
    for tool in package.tools:
        found = find_operation(tool.endpoint, package.service_profile)
        service = catalogue(package.service_profile).get(tool.service)
        if service is None:
            out.append(Finding(code=Code.UNKNOWN_ENDPOINT, detail={"tool": tool.name},
                               message=f"tool {tool.name!r}: {tool.service!r} is not a service synth simulates; "
                                       f"services: {', '.join(sorted(catalogue(package.service_profile)))}"))
            continue
        if tool.service not in package.services:
            out.append(Finding(code=Code.UNKNOWN_ENDPOINT, detail={"tool": tool.name},
                               message=f"tool {tool.name!r}: service {tool.service!r} is missing from the package's "
                                       f"services ({', '.join(package.services)}); add it there"))
            continue
        if found is None or found[0].name != tool.service:
            out.append(Finding(code=Code.UNKNOWN_ENDPOINT, detail={"tool": tool.name, "endpoint": tool.endpoint},
                               message=f"tool {tool.name!r} is bound to {tool.endpoint!r}, which {tool.service} does "
                                       f"not offer; valid endpoints: {', '.join(service.endpoints)}"))
            continue
        problem = parameters_mismatch(tool.parameters, found[1].parameters)
        if problem:
            out.append(Finding(code=Code.TOOL_SCHEMA_MISMATCH, detail={"tool": tool.name},
                               message=f"tool {tool.name!r} ({tool.endpoint}): {problem}"))
    return out


def parameters_mismatch(tool: dict[str, Any], op: dict[str, Any]) -> str | None:
    """Why a tool's parameter schema disagrees with its operation's, or None.

    A tool may offer a subset of the optional parameters; it must offer and require every
    parameter the operation requires, and each offered one must exist with the same type and an
    enum no wider than the operation's.
    """
    t_props, o_props = tool.get("properties", {}), op.get("properties", {})
    for name, schema in t_props.items():
        if name not in o_props:
            return f"parameter {name!r} is not a parameter of the operation (has: {', '.join(o_props)})"
        t_type, o_type = schema.get("type"), o_props[name].get("type")
        if t_type and o_type and t_type != o_type:
            return f"parameter {name!r} is {t_type}, the operation takes {o_type}"
        t_enum, o_enum = schema.get("enum"), o_props[name].get("enum")
        if t_enum and o_enum and not set(t_enum) <= set(o_enum):
            return f"parameter {name!r} allows {sorted(set(t_enum) - set(o_enum))} outside the operation's enum"
    for name in op.get("required", []):
        if name not in t_props or name not in tool.get("required", []):
            return f"required parameter {name!r} of the operation is not a required tool parameter"
    return None


def unknown_tool_findings(package: TaskPackage) -> list[Finding]:
    """Reference steps, checks and safety rules may only name offered tools (a claw package's
    safety rule also an action of its services, ``claw_service_action``): another name is a rule
    about a tool interface the package does not have."""
    offered = {t.name for t in package.tools}
    out: list[Finding] = []
    for i, step in package.call_steps:
        if step.call not in offered:
            out.append(Finding(code=Code.UNKNOWN_TOOL, step=i,
                               message=f"reference step {i} calls {step.call!r}, not among the tools offered "
                                       f"({', '.join(sorted(offered))})"))
    for check in package.checks:
        fields = vars(check)  # a check kind without the field names no tool there
        names = fields.get("tools") or ([fields["tool"]] if "tool" in fields else [])
        for name in names:
            if name not in offered:
                out.append(Finding(code=Code.UNKNOWN_TOOL, check=check.id,
                                   message=f"check {check.id!r} names tool {name!r}, which is not offered"))
    for rule in package.safety:
        if rule.kind == "not_called" and rule.tool not in offered and not claw_service_action(package, rule.tool):
            out.append(Finding(code=Code.UNKNOWN_TOOL, check=rule.id,
                               message=f"safety rule {rule.id!r} forbids {rule.tool!r}, which the package does not "
                                       "offer: offer the tool or drop the rule"))
    return out


def claw_service_action(package: TaskPackage, name: str) -> bool:
    """Whether a claw-profile package's safety rule may name ``name`` though the package does not
    offer it: ClawEnvKit's validator accepts a ``tool_not_called`` on any action of the task's
    services (its mock services answer every action), so a ``delete_job`` kept out of the tool
    list is a rule of the ecosystem's own kind (in synth's environment it is ``vacuous_safety``'s
    note). A name no service has is a rule bound to nothing; in the default profile a rule must
    name an offered tool."""
    if package.service_profile != CLAW_PROFILE:
        return False
    for service in package.services:
        spec = get_service(service, package.service_profile)
        if spec is not None and any(default_tool_name(service, op, package.service_profile) == name
                                    for op in spec.operations):
            return True
    return False


def weight_findings(package: TaskPackage) -> list[Finding]:
    out: list[Finding] = []
    total = sum(c.weight for c in package.checks)
    if abs(total - 1.0) > WEIGHT_TOLERANCE:
        out.append(Finding(code=Code.WEIGHTS_INVALID, detail={"total": total},
                           message=f"check weights sum to {total:g}, not 1"))
    zero = [c.id for c in package.checks if c.weight <= 0]
    if zero:
        out.append(Finding(code=Code.WEIGHTS_INVALID, message=f"checks with no weight: {zero}; give them weight "
                                                              "or move them to safety"))
    judge = sum(c.weight for c in package.checks if c.kind == "judge")
    if judge > JUDGE_MAX_WEIGHT + WEIGHT_TOLERANCE:
        out.append(Finding(code=Code.JUDGE_OVERWEIGHT, detail={"judge_weight": judge},
                           message=f"judge checks carry {judge:g} of the weight (cap {JUDGE_MAX_WEIGHT:g}): "
                                   "a pass must not depend on an LLM judge"))
    return out


def _state_index(states: list[dict[str, Any]], profile: str) -> tuple[set[str], set[str]]:
    """All record ids (each collection's id field in ``profile``) and all email-like values found
    in the given states."""
    ids: set[str] = set()
    texts: list[str] = []  # the strings holding an @, in fields and in lists in fields
    seen: set[int] = set()  # a collection or record no step wrote is the same object in both states
    for state in states:
        for service, collections in state.items():
            for name, records in collections.items():
                if id(records) in seen:
                    continue
                seen.add(id(records))
                id_field = record_id_field(f"{service}.{name}", profile)
                for rec in records:
                    if id(rec) in seen:
                        continue
                    seen.add(id(rec))
                    if id_field is not None and id_field in rec:
                        ids.add(str(rec[id_field]))
                    for v in rec.values():
                        if isinstance(v, str):
                            if "@" in v:
                                texts.append(v)
                        elif isinstance(v, list):
                            texts += [item for item in v if isinstance(item, str) and "@" in item]
    return ids, {e.casefold() for text in texts for e in _EMAIL_IN_TEXT.findall(text)}


def _id_like(value: Any, shapes: tuple[re.Pattern[str], ...]) -> bool:
    return isinstance(value, str) and any(p.match(value) for p in shapes)


def reference_findings(package: TaskPackage, ref: Trajectory | None) -> list[Finding]:
    """``$ref``s point backwards at a step that can hold what they name; ``$fact``s name a fact;
    check collections exist; ids and emails in checks and safety exist in the initial state or in
    the state the reference leaves (as a field, or inside a field's text), or the request or a fact
    states them."""
    out: list[Finding] = []
    facts = {f.key for f in package.user.facts} if package.user else set()
    for i, step in enumerate(package.reference):
        if not isinstance(step, CallStep):
            continue
        for link in iter_refs(step.args):
            if "$fact" in link:
                if link["$fact"] not in facts:
                    out.append(Finding(code=Code.DANGLING_REFERENCE, step=i,
                                       message=f"step {i}: $fact {link['$fact']!r} is not a fact of the simulated user"))
                continue
            try:
                parts = parse_ref(str(link["$ref"]))
            except ResolveError as exc:
                out.append(Finding(code=Code.DANGLING_REFERENCE, step=i, message=f"step {i}: {exc}"))
                continue
            target = parts[1]
            assert isinstance(target, int)
            if not 0 <= target < i:
                out.append(Finding(code=Code.DANGLING_REFERENCE, step=i,
                                   message=f"step {i}: $ref {link['$ref']!r} must point at an earlier step"))
            elif ref_target_missing(package, target, parts):
                out.append(Finding(code=Code.DANGLING_REFERENCE, step=i,
                                   message=f"step {i}: $ref {link['$ref']!r} names a {parts[2]!r} that step "
                                           f"{target} does not have"))
    for check in [*package.checks, *package.safety]:
        if check.kind == "asked_user" and check.fact not in facts:
            out.append(Finding(code=Code.DANGLING_REFERENCE, check=check.id,
                               message=f"check {check.id!r}: fact {check.fact!r} is not a fact of the simulated user"))
        collection = vars(check).get("collection")
        if collection:
            service, _, name = collection.partition(".")
            spec = catalogue(package.service_profile).get(service)
            if service not in package.services or spec is None or name not in spec.collections:
                out.append(Finding(code=Code.DANGLING_REFERENCE, check=check.id,
                                   message=f"check {check.id!r}: collection {collection!r} is not a collection of "
                                           "this package's services"))
    shapes = id_shapes(tuple(package.services), package.service_profile)
    named = [(check, value, _id_like(value, shapes)) for check in [*package.checks, *package.safety]
             for value in check_literals(check)]
    named = [n for n in named if n[2] or (isinstance(n[1], str) and _EMAIL.match(n[1]))]  # ids and emails
    if not named:
        return out  # nothing to look up in the states
    states = [package.initial_state] + ([ref.final_state] if ref else [])
    ids, emails = _state_index(states, package.service_profile)
    said = package.request_and_fact_values()
    emails |= {e.casefold() for e in _EMAIL_IN_TEXT.findall(said)}  # the agent is given them: not dangling
    ids |= set(re.findall(r"[\w-]+", said))
    for check, value, id_like in named:
        if id_like:
            if value not in ids:
                out.append(Finding(code=Code.DANGLING_REFERENCE, check=check.id,
                                   message=f"check {check.id!r} names id {value!r}, which no record has"))
        elif value.casefold() not in emails:
            out.append(Finding(code=Code.DANGLING_REFERENCE, check=check.id,
                               message=f"check {check.id!r} names email {value!r}, which no record has"))
    return out


def ref_target_missing(package: TaskPackage, target: int, parts: list[str | int]) -> bool:
    step = package.reference[target]
    field = parts[2] if len(parts) > 2 else None
    allowed = {"result", "args", "status"} if isinstance(step, CallStep) else {"reply", "ask", "revealed"}
    return field not in allowed
