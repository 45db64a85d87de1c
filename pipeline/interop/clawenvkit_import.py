"""ClawEnvKit task YAML as synth packages (``synth import --format clawenvkit``).

Import reads task YAML into packages with no executable reference (``has_reference=False``),
maps every check it can, lists the others, and reports the static findings and the null-agent
score of each. A file that is not a ClawEnvKit task (bad YAML, missing fields, an unknown check
type) gets one ``schema_invalid`` finding and the import goes on with the next file. The mapping
is documented in ``docs/clawenvkit.md``.
"""

from __future__ import annotations

import posixpath
import re
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import yaml
from pydantic import Field, ValidationError

from pipeline.core import yaml_text
from pipeline.core.clawenvkit.format import (
    IMPORTED_CAPABILITY,
    REQUIRED_FIELDS,
    SAFETY_TYPES,
    SCORING_TYPES,
    WORKSPACE,
    UnmappedCheck,
)
from pipeline.core.clawenvkit.grading import PASS_THRESHOLD as CLAW_PASS_THRESHOLD
from pipeline.core.clawenvkit.grading import ClawGrade, null_agent_grade
from pipeline.core.clawenvkit.pdf_pages import PdfError, read_pages
from pipeline.core.codes import Code
from pipeline.core.errors import UserError, first_validation_error, problems
from pipeline.core.io import files_under
from pipeline.core.outcomes import Finding, Verdict
from pipeline.core.package import DEFAULT_NOW, PASS_SCORE, TaskPackage, load_package, passes
from pipeline.core.services import (
    CLAW_PROFILE,
    DEFAULT_PROFILE,
    OperationSpec,
    catalogue,
    find_operation,
    get_service,
    unknown_profile,
)
from pipeline.core.services.claw_fixtures import to_initial_state
from pipeline.core.strict_model import StrictModel
from pipeline.core.untrusted import json_problem, text_problem
from pipeline.verify.mutations import null_agent_score
from pipeline.verify.verifier import verify_package

MAX_TASK_FILE_BYTES = 1024 * 1024
"""The largest task file read (1 MiB; ClawEnvKit's tasks are a few KB): a bigger one is refused
with a ``schema_invalid`` finding, unread."""
MAX_PDF_BYTES = 16 * 1024 * 1024
"""The largest PDF a task's ``files`` may name."""
MAX_PDF_PAGES = 500
"""The most pages such a PDF may have."""
MAX_PDF_FILES = 100
"""The most PDF files one task may name."""
MAX_PDF_CONTENT_BYTES = 1024 * 1024
"""The most bytes of page content streams a PDF may hold (its pages' text operators, decoded; a
stream several pages share counts for each): pypdf's time grows with them (a page of a few
hundred thousand operators takes it tens of seconds), and a text document's pages hold a few KB
each."""
MAX_PDF_SECONDS = 20.0
"""How long reading one task's PDFs may take, checked between pages."""

ProgressFn = Callable[[int, int], None]
"""Told ``(files done, files in all)`` as an import goes."""


class TaskFormatError(ValueError):
    """A document that is not a ClawEnvKit task synth can read; the message says what is wrong."""


class ImportResult(StrictModel):
    """One file's import: the package (None when the file is not a task synth can read), the
    verifier's verdict on it (for an unreadable file: one ``schema_invalid`` finding), the checks
    left out, and what an agent that does nothing scores, by synth's grader and by ClawEnvKit's."""

    source: str
    task_id: str | None = None
    task_name: str | None = None
    package: TaskPackage | None = None
    verdict: Verdict
    unmapped: list[UnmappedCheck] = Field(default_factory=list)
    null_agent_score: float | None = None
    """synth's score of the imported package for no call and no answer (an unconfigured judge
    is left out of the score); None when nothing was imported."""
    clawenvkit_null_agent: ClawGrade | None = None
    """ClawEnvKit's grade of the task document for no call and an empty answer
    (``clawenvkit_grading.null_agent_grade``: their judge scores 0.5, ``keywords_absent`` 1,
    robustness 1); also for a task synth refuses; None when the document is not one their grader
    can grade (not a mapping, a weight that is not a number, an unknown safety type)."""

    @property
    def imported(self) -> bool:
        return self.package is not None

    @property
    def findings(self) -> list[Finding]:
        return self.verdict.findings


def _operation(service: str, action: str, profile: str) -> OperationSpec | None:
    """The operation of ``service`` in ``profile`` whose canonical action name is ``action``."""
    spec = get_service(service, profile)
    return next((op for op in spec.operations if op.name == action), None) if spec else None


class NullAgentFloors(StrictModel):
    """What an agent that does nothing scores over imported tasks (``of``), both ways."""

    tasks: int
    """Imported tasks counted."""
    synth_mean: float
    """Mean of ``ImportResult.null_agent_score``."""
    synth_passes: int
    """Tasks where that score reaches synth's pass threshold (``synth_threshold``)."""
    synth_threshold: float = PASS_SCORE
    clawenvkit_mean: float | None
    """Mean of ClawEnvKit's final score (``ImportResult.clawenvkit_null_agent``) over the tasks
    their grader can grade; None when it can grade none."""
    clawenvkit_passes: int
    """Tasks where their final score reaches their pass threshold (``clawenvkit_threshold``)."""
    clawenvkit_threshold: float = CLAW_PASS_THRESHOLD

    @classmethod
    def of(cls, results: Iterable[ImportResult]) -> NullAgentFloors | None:
        """The floors over the imported ``results`` (None when none was imported)."""
        imported = [r for r in results if r.imported and r.null_agent_score is not None]
        if not imported:
            return None
        ours = [r.null_agent_score or 0.0 for r in imported]
        theirs = [r.clawenvkit_null_agent for r in imported if r.clawenvkit_null_agent is not None]
        return cls(tasks=len(imported), synth_mean=sum(ours) / len(ours),
                   synth_passes=sum(passes(s) for s in ours),
                   clawenvkit_mean=sum(g.final for g in theirs) / len(theirs) if theirs else None,
                   clawenvkit_passes=sum(g.passed for g in theirs))


def _audit_base(check: dict[str, Any], profile: str) -> dict[str, Any] | str:
    """A ``called`` check on the tool an audit check names, or why ClawEnvKit's grader never passes
    it. On the claw profile the action must be one its service logs, and a ``field`` one of that
    action's parameters (their services drop unknown fields before logging)."""
    if not check.get("service") or not check.get("action"):
        missing = " and ".join(k for k in ("service", "action") if not check.get(k))
        return f"names no {missing}: ClawEnvKit's grader finds no audit entry for it and never passes it"
    service, action = str(check["service"]), str(check["action"])
    if profile != DEFAULT_PROFILE:
        op = _operation(service, action, profile)
        if op is None:
            return f"service {service!r} logs no action {action!r}: ClawEnvKit's grader never passes it"
        fields = [str(check["field"])] if "field" in check else [str(k) for k in check.get("field_match") or {}]
        unknown = [f for f in fields if f not in op.parameters.get("properties", {})]
        if unknown:
            return (f"{', '.join(unknown)} is not a parameter of {action}: ClawEnvKit's service drops it before "
                    "logging, so the check never passes")
    return {"kind": "called", "tool": action}


def _audit_importer(build: Callable[[dict[str, Any], dict[str, Any], str], dict[str, Any] | str]
                    ) -> Callable[[dict[str, Any], str], dict[str, Any] | str]:
    def convert(check: dict[str, Any], profile: str) -> dict[str, Any] | str:
        base = _audit_base(check, profile)
        return base if isinstance(base, str) else build(check, base, profile)

    return convert


def _contains(check: dict[str, Any], profile: str) -> Any:
    """The matcher of ``audit_field_contains``: on the claw profile, as their grader reads it (a
    substring, ignoring case: ``(?i)`` and the text escaped); in synth's own layout ``$contains``,
    as synth exported it."""
    text = str(check.get("contains") or check.get("value") or "")
    return {"$contains": text} if profile == DEFAULT_PROFILE else {"$regex": "(?i)" + re.escape(text)}


def _count(check: dict[str, Any], *names: str) -> int:
    return int(next((check[n] for n in names if n in check), 0))


def _sequence(check: dict[str, Any], profile: str) -> dict[str, Any] | str:
    """An ``order`` of the steps' actions; or, for N steps that are one action with one
    ``field_match`` (their grader reaches the end exactly when N calls match, in any order), a
    ``called`` with those arguments and ``min: N``."""
    actions = check.get("actions") or []
    if not check.get("service") or not all(isinstance(a, dict) and a.get("action") for a in actions):
        return "a sequence needs a service and an action per step"
    if any(a.get("field_match") for a in actions):
        first = actions[0]
        if any((a["action"], a.get("field_match")) != (first["action"], first.get("field_match")) for a in actions):
            return "synth's order check cannot match arguments"
        base = _audit_base({"service": check["service"], "action": first["action"],
                            "field_match": first["field_match"]}, profile)
        return base if isinstance(base, str) else {**base, "args_match": dict(first["field_match"]),
                                                   "min": len(actions)}
    if profile != DEFAULT_PROFILE:
        unknown = [str(a["action"]) for a in actions if _operation(str(check["service"]), str(a["action"]), profile) is None]
        if unknown:
            return f"service {check['service']!r} logs no action {unknown[0]!r}: ClawEnvKit's grader never completes it"
    if len(actions) < 2:
        return "a sequence of fewer than two actions orders nothing"
    return {"kind": "order", "tools": [str(a["action"]) for a in actions]}


def _keyword_list(check: dict[str, Any]) -> list[str]:
    keywords = check.get("keywords") or []
    if not isinstance(keywords, list):
        raise TypeError(f"keywords must be a list, got {type(keywords).__name__}")
    return [str(k) for k in keywords]


def _keywords(kind: str) -> Callable[[dict[str, Any], str], dict[str, Any] | str]:
    def convert(check: dict[str, Any], _profile: str = DEFAULT_PROFILE) -> dict[str, Any] | str:
        keywords = _keyword_list(check)
        return {"kind": kind, "values": keywords} if keywords else "no keywords: ClawEnvKit passes it always"

    return convert


def _keywords_present(check: dict[str, Any], _profile: str) -> dict[str, Any] | str:
    """All keywords (``answer_contains``); with ``keywords_any``, at least one (``answer_matches``)."""
    keywords = _keyword_list(check)
    if check.get("keywords_any") and keywords:
        return {"kind": "answer_matches", "pattern": "|".join(re.escape(k) for k in keywords)}
    return _keywords("answer_contains")(check, _profile)


def _pattern(check: dict[str, Any], _profile: str) -> dict[str, Any] | str:
    pattern = str(check.get("pattern") or "")
    try:
        re.compile(pattern)
    except re.error as exc:
        return f"pattern is not a valid regular expression ({exc})"
    return {"kind": "answer_matches", "pattern": pattern} if pattern else "empty pattern: matches any answer"


def _judge(check: dict[str, Any], _profile: str) -> dict[str, Any] | str:
    rubric = str(check.get("rubric") or "").strip()
    return {"kind": "judge", "rubric": rubric} if rubric else "empty rubric"


_NO_FILES = "synth packages have no files or shell to inspect"
Importer = Callable[[dict[str, Any], str], dict[str, Any] | str]
"""A check's conversion: ``(check, profile)`` → synth check data, or why it is left out."""
_IMPORT_CHECK: dict[str, Importer] = {
    "audit_action_exists": _audit_importer(
        lambda c, base, _: {**base, "args_match": dict(c.get("field_match") or {})}),
    "audit_field_equals": _audit_importer(
        lambda c, base, _: {**base, "args_match": {str(c.get("field")): c.get("value")}}),
    "audit_field_contains": _audit_importer(
        lambda c, base, profile: {**base, "args_match": {str(c.get("field")): _contains(c, profile)}}),
    "audit_count_gte": _audit_importer(lambda c, base, _: {**base, "min": _count(c, "count", "min_count")}),
    "audit_count_equals": _audit_importer(
        lambda c, base, _: {**base, "min": _count(c, "count", "expected_count"),
                            "max": _count(c, "count", "expected_count")}),
    "audit_sequence": _sequence,
    "keywords_present": _keywords_present,
    "keywords_absent": _keywords("answer_excludes"),
    "pattern_match": _pattern,
    "min_length": lambda *_: "synth's answer checks have no length check",
    "file_exists": lambda *_: _NO_FILES,
    "file_hash_equals": lambda *_: _NO_FILES,
    "exit_code": lambda *_: _NO_FILES,
    "pytest_pass": lambda *_: _NO_FILES,
    "llm_judge": _judge,
}
_IMPORT_SAFETY: dict[str, Importer] = {
    "tool_not_called": lambda c, _: {"kind": "not_called", "tool": str(c["tool_name"])} if c.get("tool_name")
    else "names no tool_name",
    "keywords_not_in_output": _keywords("answer_excludes"),
}


def _list(doc: dict[str, Any], field: str) -> list[Any]:
    value = doc.get(field)
    if value is None:
        return []
    if not isinstance(value, list):
        raise TaskFormatError(f"{field}: expected a list, got {type(value).__name__}")
    return value


def _checks(doc: dict[str, Any], safety: bool, profile: str) -> tuple[list[dict[str, Any]], list[UnmappedCheck]]:
    field, known, importers = (("safety_checks", SAFETY_TYPES, _IMPORT_SAFETY) if safety
                               else ("scoring_components", SCORING_TYPES, _IMPORT_CHECK))
    mapped: list[dict[str, Any]] = []
    unmapped: list[UnmappedCheck] = []
    for i, item in enumerate(_list(doc, field)):
        spec = item if safety else (item.get("check") if isinstance(item, dict) else None)
        if not isinstance(spec, dict):
            shape = "a mapping with a type" if safety else "a mapping with name, weight and a check mapping"
            raise TaskFormatError(f"{field}[{i}]: expected {shape}")
        name = str(item.get("name") or f"{'safety' if safety else 'check'}-{i}")
        ctype = spec.get("type")
        if not isinstance(ctype, str) or ctype not in known:
            raise TaskFormatError(f"{field}[{i}] ({name}): unknown check type {ctype!r}; "
                                  f"ClawEnvKit's types are {', '.join(known)}")
        weight = 0.0 if safety else item.get("weight", 0.0)
        if isinstance(weight, bool) or not isinstance(weight, int | float):
            raise TaskFormatError(f"{field}[{i}] ({name}): weight must be a number, got {weight!r}")
        try:
            result = importers[ctype](spec, profile)
        except (TypeError, ValueError) as exc:
            raise TaskFormatError(f"{field}[{i}] ({name}): {exc}") from exc
        if isinstance(result, str):
            unmapped.append(UnmappedCheck(id=name, kind=ctype, weight=weight, safety=safety, reason=result))
        elif safety:
            mapped.append({**result, "id": name})
        else:
            mapped.append({**result, "id": name, "weight": weight})
    return mapped, unmapped


def _required(tool: dict[str, Any], i: int) -> list[str]:
    required = tool.get("required") or []
    if not isinstance(required, list) or not all(isinstance(r, str) for r in required):
        raise TaskFormatError(f"tools[{i}].required: expected a list of parameter names")
    return required


def _parameters(tool: dict[str, Any], i: int) -> dict[str, Any] | None:
    """A tool's parameters as a JSON Schema object, or None when absent or empty. Accepted forms: a
    JSON Schema object (``type: object`` or ``properties``, as synth exports it); ClawEnvKit's flat
    mapping of parameter name → schema, with the required names in the tool's ``required``; a flat
    list of parameters, each a schema with its ``name`` (``required: true`` marks a required one)."""
    params = tool.get("parameters")
    if params is None or params == {} or params == []:
        return None
    required = _required(tool, i)
    if isinstance(params, list):
        properties: dict[str, Any] = {}
        for j, item in enumerate(params):
            if not isinstance(item, dict) or not isinstance(item.get("name"), str) or not item["name"]:
                raise TaskFormatError(f"tools[{i}].parameters[{j}]: expected a mapping with a name")
            properties[item["name"]] = {k: v for k, v in item.items() if k not in ("name", "required")}
            if item.get("required") is True and item["name"] not in required:
                required = [*required, item["name"]]
        return {"type": "object", "properties": properties, "required": required}
    if isinstance(params, dict):
        if params.get("type") == "object" or isinstance(params.get("properties"), dict):
            return params
        if all(isinstance(v, dict) for v in params.values()):
            return {"type": "object", "properties": params, "required": required}
    raise TaskFormatError(f"tools[{i}].parameters: expected a JSON Schema object, a mapping of parameter name "
                          "to schema, or a list of parameters with names")


UNEXPRESSIBLE_SERVICES: dict[str, str] = {
    "web_real": "searches and fetches the live web through a search API; a deterministic mock world has no "
                "internet to answer from",
    "web_real_injection": "searches the live web and plants adversarial text in the real pages it returns; a "
                          "deterministic mock world has no internet to answer from",
}
"""ClawEnvKit services the claw profile has no counterpart for, and why (the fixture-backed
``web`` service is its deterministic counterpart)."""


def task_profile(doc: dict[str, Any]) -> str:
    """The service profile a task is imported onto: the one named by synth's own export layout (a
    ``synth`` mapping; its ``service_profile``, ``default`` when absent, as exported before
    profiles existed), else ``claw``: a task written for ClawEnvKit's services."""
    synth = doc.get("synth")
    if not isinstance(synth, dict):
        return CLAW_PROFILE
    profile = synth.get("service_profile") or DEFAULT_PROFILE
    problem = unknown_profile(profile) if isinstance(profile, str) else f"{profile!r} is not a profile name"
    if problem:
        raise TaskFormatError(f"synth.service_profile: {problem}")
    return profile


def _unknown_service(service: str, name: str, profile: str) -> str:
    """Why a task whose tool ``name`` uses ``service`` cannot be imported onto ``profile``."""
    known = ", ".join(sorted(catalogue(profile)))
    if profile == DEFAULT_PROFILE:
        return (f"tool {name!r}: service {service!r} is not one of synth's mock services ({known}); synth imports "
                "only tasks over those services")
    why = UNEXPRESSIBLE_SERVICES.get(service, "is not a ClawEnvKit service the claw profile mirrors")
    return f"tool {name!r}: service {service!r} {why}; synth imports tasks over the claw profile's services ({known})"


def _tools(doc: dict[str, Any], profile: str) -> list[dict[str, Any]]:
    """The task's tools. In the default profile a tool keeps its name and parameters (as synth
    exported them; the parameters of the operation at its endpoint when it has none). In the
    claw profile a tool bound to an operation of its service is that operation's: named by its
    canonical action name (the name ClawEnvKit's services log, whatever the task called it) with
    its parameters (their request model); one bound to an endpoint the service lacks keeps its
    own (the verifier reports ``unknown_endpoint``). Tools that end up with one name are one tool."""
    tools: dict[str, dict[str, Any]] = {}
    for i, tool in enumerate(_list(doc, "tools")):
        if not isinstance(tool, dict) or not all(isinstance(tool.get(k), str) for k in ("name", "service", "endpoint")):
            raise TaskFormatError(f"tools[{i}]: expected a mapping with name, service and endpoint strings")
        spec = get_service(tool["service"], profile)
        if spec is None:
            raise TaskFormatError(_unknown_service(tool["service"], tool["name"], profile))
        op = spec.operation(tool["endpoint"]) if profile != DEFAULT_PROFILE else None
        parameters = _parameters(tool, i) if op is None else op.parameters
        if parameters is None:
            found = find_operation(tool["endpoint"], profile)
            parameters = found[1].parameters if found else {"type": "object", "properties": {}}
        name = op.name if op is not None else tool["name"]
        description = str(tool.get("description") or (op.description if op is not None else ""))
        tools.setdefault(name, {"name": name, "service": tool["service"], "endpoint": tool["endpoint"],
                                "description": description, "parameters": parameters})
    if not tools:
        raise TaskFormatError("tools: no tools; synth imports API tasks (tools bound to service endpoints) only")
    return list(tools.values())


def _actions_by_tool_names(doc: dict[str, Any]) -> dict[str, Any]:
    """``doc`` with every action its checks name (``action``, a sequence's ``actions[].action``, a
    safety rule's ``tool_name``) that is the name of one of its own tools replaced by the canonical
    action name of that tool's operation: ClawEnvKit's agent-loop harness logs a call under the
    name of the tool the agent called, so a check naming a tool ``add_todo`` bound to
    ``/todo/tasks/create`` grades ``create_task`` calls. Names no tool carries are kept."""
    renamed: dict[str, str] = {}
    for tool in _list(doc, "tools"):
        if isinstance(tool, dict) and isinstance(tool.get("name"), str):
            spec = get_service(str(tool.get("service")), CLAW_PROFILE)
            op = spec.operation(str(tool.get("endpoint"))) if spec else None
            if op is not None and op.name != tool["name"]:
                renamed.setdefault(tool["name"], op.name)
    if not renamed:
        return doc

    def rename(check: Any) -> Any:
        if not isinstance(check, dict):
            return check
        out = dict(check)
        for key in ("action", "tool_name"):
            if isinstance(out.get(key), str):
                out[key] = renamed.get(out[key], out[key])
        if isinstance(out.get("actions"), list):
            out["actions"] = [rename(a) for a in out["actions"]]
        return out

    components = [{**c, "check": rename(c.get("check"))} if isinstance(c, dict) else c
                  for c in doc.get("scoring_components") or []]
    safety = [rename(c) for c in doc.get("safety_checks") or []] if isinstance(doc.get("safety_checks"), list) \
        else doc.get("safety_checks")
    return {**doc, "scoring_components": components, "safety_checks": safety}


def _records(value: list[Any], where: str) -> list[dict[str, Any]]:
    if not all(isinstance(r, dict) for r in value):
        raise TaskFormatError(f"{where}: expected a list of records (mappings)")
    return value


def _initial_state(fixtures: Any, services: list[str]) -> dict[str, dict[str, list[dict[str, Any]]]]:
    """ClawEnvKit fixtures as per-service collections (none for absent or ``[]`` fixtures). A list value is a collection of the one
    service (or of the one service whose catalogue has a collection of that name); a mapping value
    is a service's collections."""
    if fixtures is None or fixtures == []:
        return {}
    if not isinstance(fixtures, dict):
        raise TaskFormatError(f"fixtures: expected a mapping, got {type(fixtures).__name__}")
    state: dict[str, dict[str, list[dict[str, Any]]]] = {}
    for key, value in fixtures.items():
        if isinstance(value, list):
            owners = services if len(services) == 1 else [
                s for s in services if (spec := get_service(s)) is not None and key in spec.collections]
            if len(owners) != 1:
                raise TaskFormatError(f"fixtures.{key}: cannot tell which service ({', '.join(services)}) it belongs to; "
                                      "key cross-service fixtures by service name")
            state.setdefault(owners[0], {})[key] = _records(value, f"fixtures.{key}")
        elif isinstance(value, dict):
            for collection, records in value.items():
                if not isinstance(records, list):
                    raise TaskFormatError(f"fixtures.{key}.{collection}: expected a list of records")
                state.setdefault(key, {})[collection] = _records(records, f"fixtures.{key}.{collection}")
        else:
            raise TaskFormatError(f"fixtures.{key}: expected a list of records or a mapping of collections")
    return state


def _offered_only(safety: list[dict[str, Any]], offered: set[str]) -> tuple[list[dict[str, Any]], list[UnmappedCheck]]:
    """The safety rules without the ``not_called`` ones on a tool the task does not offer (no
    agent can call it, so their grader never sees it broken), and those left out."""
    kept = [r for r in safety if r["kind"] != "not_called" or r["tool"] in offered]
    left = [UnmappedCheck(id=r["id"], kind="tool_not_called", safety=True,
                          reason="forbids a tool the task does not offer: no agent can call it, so the rule forbids "
                                 "nothing")
            for r in safety if r not in kept]
    return kept, left


def _claw_state(fixtures: Any, services: list[str]) -> dict[str, dict[str, list[dict[str, Any]]]]:
    """ClawEnvKit fixtures as the claw services' initial state, as their harness seeds its mock
    services: each service reads its own key when ``fixtures`` has one, else the whole fixtures
    (a bare list too, as their single-service container does), then its loader makes its
    collections of that (``claw_fixtures.to_initial_state``: bare list, single-key object, first
    list of a several-key object, ``id`` copied into the id field, ``web``'s named lists)."""
    if fixtures is None or fixtures == [] or fixtures == {}:
        return {}
    if not isinstance(fixtures, dict | list):
        raise TaskFormatError(f"fixtures: expected a mapping or a list, got {type(fixtures).__name__}")
    state: dict[str, dict[str, list[dict[str, Any]]]] = {}
    for service in services:
        spec = get_service(service, CLAW_PROFILE)
        if spec is None or spec.fixture is None:
            continue
        content = fixtures.get(service, fixtures) if isinstance(fixtures, dict) else fixtures
        if isinstance(content, dict) and service in content:
            content = content[service]
        collections = to_initial_state(spec, content)
        for name, records in collections.items():
            _records(records, f"fixtures ({service}.{name})")
        if any(collections.values()):
            state[service] = collections
    return state


def _file_collections(state: dict[str, dict[str, list[dict[str, Any]]]], services: list[str]
                      ) -> Iterator[tuple[str, str, set[str], bool]]:
    """For each of ``services`` that reads files (``fixture.files``, documents): the service, its
    collection, the record fields, and whether ``state`` holds that collection's records whole
    (some records, each with every field)."""
    for service in services:
        spec = get_service(service, CLAW_PROFILE)
        if spec is None or spec.fixture is None or not spec.fixture.files:
            continue
        collection = spec.fixture.collections[0]
        fields = set(spec.collections[collection].fields)
        records = state.get(service, {}).get(collection, [])
        yield service, collection, fields, bool(records) and all(fields <= set(r) for r in records)


def _file_backed(doc: dict[str, Any], state: dict[str, dict[str, list[dict[str, Any]]]], services: list[str]) -> None:
    """``TaskFormatError`` when a service that reads files (``fixture.files``, documents) is used
    and its records do not hold what the files would: the task's ``files`` are not read."""
    for service, collection, fields, whole in _file_collections(state, services):
        if not whole:
            files = ", ".join(str(f.get("source") or f.get("target")) if isinstance(f, dict) else str(f)
                              for f in _list(doc, "files")) or "none given"
            raise TaskFormatError(f"service {service!r} reads its {collection} from files (files: {files}); the task "
                                  f"does not hold their content ({collection} records with {', '.join(sorted(fields))}), "
                                  "and synth reads no files")


def _read_files(doc: dict[str, Any], state: dict[str, dict[str, list[dict[str, Any]]]], services: list[str],
                files_dir: Path) -> None:
    """Fill the records of a service that reads files (documents), unless the fixtures hold its
    records whole (``path`` and ``pages``; their service reads no fixture, so other fixture
    records count for nothing), from the task's ``files`` entries whose target is a PDF under
    /workspace: the source (a path inside ``files_dir``, the task file's folder) read with pypdf (``pdf_pages.read_pages``, at most
    ``MAX_PDF_BYTES``, ``MAX_PDF_PAGES`` and ``MAX_PDF_CONTENT_BYTES``, all of a task's within
    ``MAX_PDF_SECONDS``) becomes a record with the target's path relative to
    /workspace and the page texts. Left unfilled when any such source is missing, so the task is
    refused as before (``_file_backed``); ``TaskFormatError`` for a PDF that cannot be read."""
    wanted = []
    for entry in _list(doc, "files"):
        target = str(entry.get("target", "")) if isinstance(entry, dict) else ""
        path = posixpath.normpath(target.removeprefix(WORKSPACE + "/")) if target.startswith(WORKSPACE + "/") else ""
        if path.lower().endswith(".pdf") and not path.startswith("../"):
            wanted.append((str(entry.get("source", "")), path))
    if len(wanted) > MAX_PDF_FILES:
        raise TaskFormatError(f"files: {len(wanted)} PDF files, more than the {MAX_PDF_FILES} a task may have")
    for source, _ in wanted:
        problem = text_problem(source)
        if problem:
            raise TaskFormatError(f"files: a source {problem}")
    root = files_dir.resolve()
    sources = [(root / source).resolve() for source, _ in wanted]
    if not wanted or any(not s.is_relative_to(root) or not s.is_file() for s in sources):
        return
    ends = time.monotonic() + MAX_PDF_SECONDS
    for service, collection, _, whole in _file_collections(state, services):
        if whole:
            continue
        try:
            records = [{"path": path, "pages": read_pages(source, MAX_PDF_BYTES, MAX_PDF_PAGES, MAX_PDF_CONTENT_BYTES,
                                                          max(0.0, ends - time.monotonic()))}
                       for source, (_, path) in zip(sources, wanted, strict=True)]
        except PdfError as exc:
            raise TaskFormatError(f"files: {exc}") from None
        state.setdefault(service, {})[collection] = records


def _files_only(doc: dict[str, Any]) -> bool:
    """A task with ``files`` and no tools: the agent works on files with its own tools."""
    return bool(doc.get("files")) and not doc.get("tools")


def to_package(doc: Any, source: str = "", files_dir: Path | None = None) -> tuple[TaskPackage, list[UnmappedCheck]]:
    """A ClawEnvKit task document as a package without reference, and the checks left out. A task
    in synth's own export layout keeps its profile; any other is mapped onto the claw profile
    (``task_profile``). ``files_dir``: the folder the task's ``files`` sources are relative to
    (the task file's), from which PDFs are read (``_read_files``); None reads no files.

    Raises ``TaskFormatError`` when the document is not a task synth can read.
    """
    if not isinstance(doc, dict):
        raise TaskFormatError(f"expected a YAML mapping (one ClawEnvKit task), got {type(doc).__name__}")
    if _files_only(doc):
        raise TaskFormatError("a files-only task (files, no tools): the agent works on files in its workspace with "
                              "its own tools, and a synth package has service tools only")
    missing = [f for f in REQUIRED_FIELDS if doc.get(f) in (None, "")]
    if missing:
        raise TaskFormatError(f"missing required {'field' if len(missing) == 1 else 'fields'}: {', '.join(missing)}")
    if not isinstance(doc["prompt"], str):
        raise TaskFormatError(f"prompt: expected text, got {type(doc['prompt']).__name__}")
    profile = task_profile(doc)
    tools = _tools(doc, profile)
    if profile != DEFAULT_PROFILE:
        doc = _actions_by_tool_names(doc)
    checks, unmapped = _checks(doc, safety=False, profile=profile)
    safety, unmapped_safety = _checks(doc, safety=True, profile=profile)
    unmapped += unmapped_safety
    if profile != DEFAULT_PROFILE:
        safety, unoffered = _offered_only(safety, {t["name"] for t in tools})
        unmapped += unoffered
    synth = doc["synth"] if isinstance(doc.get("synth"), dict) else {}
    try:
        unmapped += [UnmappedCheck.model_validate({**u, "reason": f"left out on export: {u.get('reason', '')}"})
                     for u in synth.get("unmapped") or [] if isinstance(u, dict)]
    except ValidationError as exc:
        raise TaskFormatError(f"synth.unmapped: {problems(exc)[0]['msg']}") from exc
    if not checks:
        raise TaskFormatError("no scoring component has a synth equivalent: "
                              + "; ".join(f"{u.id} ({u.kind}): {u.reason}" for u in unmapped))
    fixtures = doc.get("fixtures")
    tool_services = list(dict.fromkeys(t["service"] for t in tools))
    if synth:
        fixture_services = [k for k, v in fixtures.items() if isinstance(v, dict)] if isinstance(fixtures, dict) else []
        services = synth.get("services") or list(dict.fromkeys(tool_services + fixture_services))
    else:
        services = tool_services  # their harness starts the services of the task's tools
    if profile == CLAW_PROFILE:
        state = _claw_state(fixtures, services)
        if files_dir is not None:
            _read_files(doc, state, services, files_dir)
        _file_backed(doc, state, services)
    else:
        state = _initial_state(fixtures, services)
    data = {
        "capability": str(doc.get("category") or IMPORTED_CAPABILITY),
        "workflow": str(synth.get("workflow") or doc["task_id"]),
        "difficulty": doc.get("difficulty", "medium"),
        "services": services,
        "service_profile": profile,
        "request": {"text": doc["prompt"].strip()},
        "now": synth.get("now") or DEFAULT_NOW,
        "initial_state": state,
        "tools": tools,
        "checks": checks,
        "safety": safety,
        "reference": [],
        "has_reference": False,
        "provenance": {"generator": "clawenvkit", "template": str(doc["task_id"]), "source": source},
    }
    try:
        package = load_package(data)
    except ValidationError as exc:
        raise TaskFormatError(f"does not make a valid synth package: {first_validation_error(exc, '(task)')}") from exc
    return package.with_id(), unmapped


def their_null_agent(doc: Any) -> ClawGrade | None:
    """ClawEnvKit's grade of ``doc`` for an agent that does nothing, or None when their grader
    cannot grade the document (see ``ImportResult.clawenvkit_null_agent``)."""
    if not isinstance(doc, dict):
        return None
    try:
        return null_agent_grade(doc)
    except (ValueError, TypeError, AttributeError):  # what their grader raises on such a document
        return None


def import_task(doc: Any, source: str, files_dir: Path | None = None) -> ImportResult:
    """Import one parsed task document (see ``to_package``; ``files_dir`` as there) and verify it.
    With no reference to execute, the verifier runs its static and consistency checks and the
    null-agent test."""
    ids = {k: str(doc[k]) for k in ("task_id", "task_name") if isinstance(doc, dict) and doc.get(k) is not None}
    theirs = their_null_agent(doc)
    try:
        package, unmapped = to_package(doc, source, files_dir)
    except TaskFormatError as exc:
        return _unreadable(source, str(exc), **ids).model_copy(update={"clawenvkit_null_agent": theirs})
    return ImportResult(source=source, **ids, package=package, verdict=verify_package(package),
                        unmapped=unmapped, null_agent_score=null_agent_score(package), clawenvkit_null_agent=theirs)


def iter_task_files(paths: Iterable[Path]) -> Iterator[tuple[Path, Path | None]]:
    """``(file, folder)`` for each file named by ``paths``: a folder contributes its
    ``*.yaml``/``*.yml`` files, sorted, each with that folder (which it must not lead out of, see
    ``import_file``); a file named itself comes with None. ``UserError`` for a path that does not
    exist."""
    for path in paths:
        for file in files_under([path], (".yaml", ".yml"), "ClawEnvKit task .yaml files or folders of them"):
            yield file, path if path.is_dir() else None


def read_task_text(path: Path) -> str:
    """The text of one task file: a regular file of at most ``MAX_TASK_FILE_BYTES``, in UTF-8.
    Raises ``OSError``/``UnicodeDecodeError`` or ``TaskFormatError`` saying what is wrong."""
    if not path.is_file():
        raise TaskFormatError("not a regular file; pass task .yaml files or folders of them")
    with path.open("rb") as fh:
        data = fh.read(MAX_TASK_FILE_BYTES + 1)
    if len(data) > MAX_TASK_FILE_BYTES:
        raise TaskFormatError(f"larger than the {MAX_TASK_FILE_BYTES // 1024 ** 2} MiB a task file may be; "
                              "not read (a ClawEnvKit task is a few KB)")
    return data.decode("utf-8")


def import_file(path: Path, folder: Path | None = None) -> ImportResult:
    """Import one task file; an unreadable one gets a ``schema_invalid`` finding, not an exception.
    A file found in ``folder`` that is a link leading out of it is refused unread; the document
    must pass the untrusted-text policy (``core.untrusted.json_problem``: no NUL or lone surrogate,
    nesting at most 64 levels)."""
    if folder is not None and not path.resolve().is_relative_to(folder.resolve()):
        return _unreadable(str(path), f"a link to {path.resolve()}, outside the folder {folder} being imported; "
                                      "not read (copy the file into the folder to import it)")
    try:
        doc = yaml_text.load(read_task_text(path))
    except (OSError, UnicodeDecodeError) as exc:
        return _unreadable(str(path), f"cannot read the file ({exc})")
    except TaskFormatError as exc:
        return _unreadable(str(path), str(exc))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        return _unreadable(str(path), f"not valid YAML ({getattr(exc, 'problem', None) or exc}{where})")
    except RecursionError:
        return _unreadable(str(path), "nested too deeply to read")
    problem = json_problem(doc)
    if problem:
        return _unreadable(str(path), f"the document {problem}")
    return import_task(doc, str(path), path.parent)


def import_clawenvkit(paths: Iterable[Path], on_progress: ProgressFn | None = None) -> list[ImportResult]:
    """One ``ImportResult`` per task file under ``paths`` (``UserError``, before any is read, if a
    path does not exist or there is no task file at all); unreadable files get a finding, not an
    exception. ``on_progress`` is told ``(files done, files in all)`` after each file."""
    paths = list(paths)
    files = list(iter_task_files(paths))
    if not files:
        raise UserError(f"no .yaml/.yml files in {', '.join(map(str, paths))}; pass task files or folders")
    results = []
    for path, folder in files:
        try:
            results.append(import_file(path, folder))
        except Exception as exc:  # one hostile file never ends the import of the others
            results.append(_unreadable(str(path), f"cannot be imported ({type(exc).__name__}: {str(exc)[:200]})"))
        if on_progress is not None:
            on_progress(len(results), len(files))
    return results


def _unreadable(source: str, message: str, task_id: str | None = None, task_name: str | None = None) -> ImportResult:
    """The result for a file that is not a task synth can read: one ``schema_invalid`` finding."""
    finding = Finding(code=Code.SCHEMA_INVALID, message=f"{source}: {message}")
    return ImportResult(source=source, task_id=task_id, task_name=task_name,
                        verdict=Verdict.build("(invalid)" if task_id is None else task_id, [finding], None))
