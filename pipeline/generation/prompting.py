"""The generation prompts: ``prompts/*.j2`` rendered in a sandboxed Jinja2 environment.

``system.j2`` states the package contract, what verification tries (the rules a package must
follow), the reason codes and a compact example package (``prompts/example.json``); it is the same
for every request. ``brief.j2`` is one package's brief: the capability and its contract, the
workflow template, the check language of the kinds the template uses (and, for multi-turn, how the
simulated user reads questions), and ``catalogue.j2``: the template's services with only the
operations it offers, each with its exact behaviour. ``generate.j2`` is the brief and a variation
seed; ``repair.j2`` is the brief and either the rejected package (the fields it set) with its
findings, or the invalid reply with its validation error. The check language, the rules and the
service behaviour are read from the code that applies them (``pipeline.core.package``,
``pipeline.core.grading``, ``pipeline.core.matchers``, ``pipeline.core.codes``, the service
catalogue), so the prompt cannot drift from what is enforced.
"""

from __future__ import annotations

import inspect
import json
import typing
from collections.abc import Mapping
from functools import cache
from typing import TYPE_CHECKING, Any

from jinja2 import FileSystemLoader, StrictUndefined
from jinja2.sandbox import SandboxedEnvironment

from pipeline.core import matchers
from pipeline.core.codes import DESCRIPTIONS
from pipeline.core.grading import EVALUATORS
from pipeline.core.outcomes import Failure, Finding
from pipeline.core.package import (
    DEFAULT_NOW,
    GRAVE_CEILING,
    JUDGE_MAX_WEIGHT,
    NULL_AGENT_FLOOR,
    PASS_SCORE,
    SAFETY_KINDS,
    Check,
    TaskPackage,
    canonical_json,
)
from pipeline.core.paths import prompts_dir
from pipeline.core.services import (
    DEFAULT_PROFILE,
    OperationSpec,
    ServiceSpec,
    catalogue,
    default_tool_name,
    get_service,
)
from pipeline.generation.base import Attempt
from pipeline.taxonomy.capabilities import Capability, Contract, UnknownName, WorkflowTemplate, find_template

if TYPE_CHECKING:  # the one module importing openai is model_client
    from openai.types.chat import ChatCompletionMessageParam

EXAMPLE_FILE = "example.json"
RAW_ECHO_LIMIT = 12_000
"""At most this many characters of an invalid reply are shown back to the model."""
_COMMON_CHECK_FIELDS = ("id", "weight", "kind")
_JUDGE_SEMANTICS = (
    f"An LLM rates the run against `rubric`; weight at most {JUDGE_MAX_WEIGHT}, never the only way to "
    "pass; not evaluated during verification, so deterministic checks must carry the score."
)


class PromptError(ValueError):
    """A prompt cannot be built: unknown capability, template or service."""


@cache
def environment() -> SandboxedEnvironment:
    """The sandbox that renders ``prompts/``: undefined names are errors, ``json`` is a filter."""
    env = SandboxedEnvironment(
        loader=FileSystemLoader(prompts_dir()),
        undefined=StrictUndefined,
        autoescape=False,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=False,
    )
    env.filters["json"] = canonical_json
    return env


def render(name: str, **context: Any) -> str:
    """Render ``prompts/<name>`` with ``context``."""
    return environment().get_template(name).render(**context).strip() + "\n"


# --------------------------------------------------------------------------- context


def _one_line(text: str | None) -> str:
    return " ".join((text or "").replace("``", "`").split())


def _type_text(schema: dict[str, Any]) -> str:
    """A JSON Schema property in a few characters: ``string``, ``list[string]``, ``"a"|"b"``."""
    if "enum" in schema:
        return "|".join(canonical_json(v) for v in schema["enum"])
    if "anyOf" in schema:
        return " or ".join(_type_text(s) for s in schema["anyOf"] if s.get("type") != "null")
    if schema.get("type") == "array":
        return f"list[{_type_text(schema.get('items', {}))}]"
    return str(schema.get("type", "any"))


def _field_text(name: str, schema: dict[str, Any], required: bool) -> str:
    text = f"{name}{'*' if required else ''}: {_type_text(schema)}"
    if "default" in schema and schema["default"] not in (None, "", [], {}):
        text += f" = {canonical_json(schema['default'])}"
    return text


@cache
def check_language() -> list[dict[str, Any]]:
    """Every check kind: its own fields (``*`` = required) and its exact semantics.

    Semantics are the evaluators' docstrings from ``pipeline.core.grading``.
    """
    out = []
    for model in typing.get_args(typing.get_args(Check)[0]):
        schema = model.model_json_schema()
        kind = schema["properties"]["kind"]["const"]
        required = set(schema.get("required", []))
        fields = [_field_text(name, prop, name in required)
                  for name, prop in schema["properties"].items() if name not in _COMMON_CHECK_FIELDS]
        evaluator = EVALUATORS.get(kind)
        semantics = _one_line(inspect.getdoc(evaluator)) if evaluator else _JUDGE_SEMANTICS
        out.append({"kind": kind, "fields": fields, "semantics": semantics, "safety": kind in SAFETY_KINDS})
    return out


def service_context(spec: ServiceSpec, offered: frozenset[str] | None = None,
                    profile: str = DEFAULT_PROFILE) -> dict[str, Any]:
    """One service as the model needs it: collections (fields, id format) and operations (tool name,
    endpoint, access, collection, behaviour, parameter schema); with ``offered``, only the
    operations whose tool is in it."""
    operations = [op for op in spec.operations if offered is None or default_tool_name(spec.name, op, profile) in offered]
    return {
        "name": spec.name,
        "description": spec.description,
        "collections": [
            {"name": name, "record": c.record, "id_format": c.id_format, "id_example": c.id_format.format(n=1),
             "fields": ", ".join(f"{f} {_type_text(s)}" for f, s in c.fields.items())}
            for name, c in spec.collections.items()
        ],
        "operations": [
            {"tool": default_tool_name(spec.name, op, profile), "endpoint": op.endpoint, "access": op.access,
             "collection": op.collection, "effect": op.effect, "description": op.description,
             "behaviour": behaviour(spec, op), "arguments": arguments_text(op.parameters)}
            for op in operations
        ],
    }


def arguments_text(parameters: dict[str, Any]) -> str:
    """A tool's arguments in a few characters each: ``title*: string, priority: low|medium|high``
    (``*`` = required; a pattern as ``/…/``, a minimum as ``>= n``)."""
    required = set(parameters.get("required", []))
    out = []
    for name, schema in parameters.get("properties", {}).items():
        text = _field_text(name, schema, name in required)
        text += f" /{schema['pattern']}/" if "pattern" in schema else ""
        text += f" >= {schema['minimum']}" if "minimum" in schema else ""
        out.append(text)
    return ", ".join(out) or "none"


def behaviour(spec: ServiceSpec, op: OperationSpec) -> str:
    """What an operation does exactly, from its spec: how it filters and matches, the order of
    results, what a created record gets, which arguments must name existing records."""
    parts: list[str] = []
    if op.filters:
        parts.append(f"Filters {', '.join(op.filters)} match exactly")
    if op.effect == "search":
        parts.append(f"query matches as a case-insensitive substring (not whole words) of {', '.join(op.search_fields)}")
    if op.effect in ("list", "search"):
        parts.append("results in stored order")
    if op.effect == "create":
        defaults = f", defaults {canonical_json(op.defaults)}" if op.defaults else ""
        parts.append(f"the new record gets the next id{defaults}")
    if op.effect == "update":
        parts.append("changes only the fields given")
    if op.timestamp_field and op.effect in ("create", "update"):
        parts.append(f"{op.timestamp_field} is set from the clock")
    if op.refs:
        parts.append("404 unless " + ", ".join(f"{param} names a {target} record" for param, target in op.refs.items()))
    return (". ".join(parts) + ".") if parts else ""


@cache
def catalogue_text(services: tuple[str, ...], tools: tuple[str, ...] | None = None,
                   profile: str = DEFAULT_PROFILE) -> str:
    """The catalogue section of the brief for these services of ``profile``, with only the
    operations of ``tools`` when given (rendered once per service and tool list)."""
    specs = [get_service(name, profile) for name in services]
    unknown = [name for name, spec in zip(services, specs, strict=True) if spec is None]
    if unknown:
        raise PromptError(f"unknown service {unknown[0]!r}; known: {', '.join(sorted(catalogue(profile)))}")
    offered = frozenset(tools) if tools else None
    return render("catalogue.j2", services=[service_context(spec, offered, profile) for spec in specs if spec is not None])


def template_kinds(capability: Capability, template: WorkflowTemplate) -> list[str]:
    """The check kinds a template uses: those its ``checks`` prose names, else the capability's;
    ``asked_user`` too for a capability whose contract needs revealed facts, and ``answer_excludes``
    wherever the answer is graded (an answer hedged with the wrong candidates must lose score, and
    excluding them is how)."""
    known = [k["kind"] for k in check_language()]
    kinds = set(template.named_check_kinds(known)) or set(capability.check_kinds)
    if capability.contract.revealed_facts:
        kinds.add("asked_user")
    if kinds & {"answer_contains", "answer_matches"}:
        kinds.add("answer_excludes")
    return [k for k in known if k in kinds]


def contract_text(contract: Contract) -> list[str]:
    """The contract's clauses in words: "at least 1: faults that fire on the reference's path …"."""
    return [f"at least {getattr(contract, name)} {field.description[0].lower()}{field.description[1:].rstrip('.')}"
            for name, field in Contract.model_fields.items() if getattr(contract, name) > 0 and field.description]


def _brief(capability: Capability, template: WorkflowTemplate, seed: int) -> dict[str, Any]:
    try:
        services = catalogue_text(tuple(template.services), tuple(template.tools) or None, template.profile)
    except PromptError as exc:
        raise PromptError(f"workflow template {template.name!r}: {exc}") from exc
    kinds = template_kinds(capability, template)
    return {
        "capability": capability.model_dump(include={"name", "description", "skill"}),
        "contract": contract_text(capability.contract),
        "template": template.model_dump(exclude={"package"}),
        "check_kinds": [k for k in check_language() if k["kind"] in kinds],
        "multi_turn": "asked_user" in kinds,
        "catalogue": services,
        "seed": seed,
    }


RULE_FIELDS_SHOWN = ("kind", "op", "scope", "ignore_case")
"""Fields of a check or safety rule the repair echo shows even at their default: ``kind`` (each
must name its kind to load) and the defaults that decide what it grades."""


def authored(package: TaskPackage) -> dict[str, Any]:
    """The package as its author would write it: no id, provenance or defaults elsewhere (an unset
    field, an empty list, ``has_reference``), but each check and safety rule with its ``kind``, its
    ``op``, ``scope`` and ``ignore_case``, and each fault whole, so a repair shows the model its own
    package and the echo loads as one (``TaskPackage.model_validate`` gives back the same
    content). A safety rule's weight (ignored) and an id the pipeline numbered are left out."""
    data = package.model_dump(mode="json", exclude={"id", "provenance", "has_reference"},
                              exclude_defaults=True, exclude_none=True)
    for name in ("checks", "safety"):
        if name in data:
            data[name] = [_authored_rule(rule, i, name == "safety") for i, rule in enumerate(getattr(package, name))]
    if package.faults:
        data["faults"] = [fault.model_dump(mode="json", exclude_none=True) for fault in package.faults]
    return data


def _authored_rule(rule: Check, index: int, safety: bool) -> dict[str, Any]:
    full = rule.model_dump(mode="json")
    shown = {**rule.model_dump(mode="json", exclude_defaults=True, exclude_none=True),
             **{key: full[key] for key in RULE_FIELDS_SHOWN if key in full}}
    if safety:
        shown.pop("weight", None)
        if shown.get("id") == f"safety-{index}":
            del shown["id"]
    return shown


# --------------------------------------------------------------------------- prompts


@cache
def system_prompt() -> str:
    """The constant system message: contract, what verification tries, reason codes, an example."""
    example = canonical_json(json.loads((prompts_dir() / EXAMPLE_FILE).read_text(encoding="utf-8")))
    return render(
        "system.j2",
        now=DEFAULT_NOW,
        pass_score=PASS_SCORE,
        grave_ceiling=GRAVE_CEILING,
        null_floor=NULL_AGENT_FLOOR,
        floor_weight=round(1 - GRAVE_CEILING, 2),
        safety_kinds=list(SAFETY_KINDS),
        matchers=_one_line(matchers.__doc__),
        codes=[(code.value, text) for code, text in DESCRIPTIONS.items()],
        example=example,
    )


def generate_prompt(capability: Capability, template: WorkflowTemplate, seed: int) -> str:
    """The brief for one new package, with its variation seed."""
    return render("generate.j2", **_brief(capability, template, seed))


def repair_prompt(capability: Capability, template: WorkflowTemplate, seed: int,
                  parent: TaskPackage, findings: list[Finding]) -> str:
    """The brief, the rejected package (the fields its author set) and why it was rejected; no
    new variation seed."""
    return render(
        "repair.j2",
        **_brief(capability, template, seed),
        rejected=canonical_json(authored(parent)),
        findings=[{"code": f.code.value, "meaning": DESCRIPTIONS[f.code], "message": f.message,
                   "step": f.step, "check": f.check} for f in findings],
    )


def invalid_repair_prompt(capability: Capability, template: WorkflowTemplate, seed: int,
                          failure: Failure, raw: str) -> str:
    """The brief, the previous reply that was not a valid package (cut to ``RAW_ECHO_LIMIT``
    characters) and its validation error."""
    shown = raw if len(raw) <= RAW_ECHO_LIMIT else raw[:RAW_ECHO_LIMIT] + f"… [{len(raw) - RAW_ECHO_LIMIT:,} more characters]"
    return render("repair.j2", **_brief(capability, template, seed), rejected=None, error=str(failure), raw=shown)


def messages_for(attempt: Attempt, capabilities: Mapping[str, Capability]) -> list[ChatCompletionMessageParam]:
    """The chat messages for an attempt, after the system prompt: a later attempt with a rejected
    ``parent`` renders the repair of that package; one after an invalid reply (``invalid`` with
    its ``raw`` text) the repair of that reply; anything else a fresh brief."""
    try:
        capability, template = find_template(capabilities, attempt.capability, attempt.template)
    except UnknownName as exc:
        raise PromptError(str(exc)) from None
    if attempt.attempt > 1 and attempt.parent is not None:
        user = repair_prompt(capability, template, attempt.item_seed, attempt.parent, attempt.findings)
    elif attempt.attempt > 1 and attempt.invalid is not None and attempt.raw:
        user = invalid_repair_prompt(capability, template, attempt.item_seed, attempt.invalid, attempt.raw)
    else:
        user = generate_prompt(capability, template, attempt.item_seed)
    return [{"role": "system", "content": system_prompt()}, {"role": "user", "content": user}]
