"""The generation prompts: ``prompts/*.j2`` rendered in a sandboxed Jinja2 environment.

``system.j2`` states the package contract (fields, reference steps, check language, verification
codes, the example package ``prompts/example.json``); it is the same for every request.
``generate.j2`` is the brief for one package: the capability, the workflow template and
``catalogue.j2``, the real catalogue of the template's services (rendered once per service list).
``repair.j2`` is that brief plus a rejected package and its findings. The check language and the
verification rules are read from the code that applies them (``pipeline.core.package``,
``pipeline.core.grading``, ``pipeline.core.matchers``, ``pipeline.core.codes``), so the prompt cannot drift
from what is enforced.
"""

from __future__ import annotations

import inspect
import typing
from collections.abc import Mapping
from functools import cache
from typing import Any

from jinja2 import FileSystemLoader, StrictUndefined
from jinja2.sandbox import SandboxedEnvironment
from openai.types.chat import ChatCompletionMessageParam

from pipeline.core import matchers
from pipeline.core.codes import DESCRIPTIONS
from pipeline.core.grading import EVALUATORS
from pipeline.core.outcomes import Finding
from pipeline.core.package import (
    DEFAULT_NOW,
    JUDGE_MAX_WEIGHT,
    PASS_THRESHOLD,
    SAFETY_KINDS,
    Check,
    TaskPackage,
    canonical_json,
)
from pipeline.core.paths import prompts_dir
from pipeline.core.services import ServiceSpec, catalogue, default_tool_name, get_service
from pipeline.generate.base import Attempt
from pipeline.taxonomy.capabilities import Capability, UnknownName, WorkflowTemplate, find_template

EXAMPLE_FILE = "example.json"
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


def service_context(spec: ServiceSpec) -> dict[str, Any]:
    """One service as the model needs it: collections (fields, id format) and operations (tool name,
    endpoint, access, collection, parameter schema)."""
    return {
        "name": spec.name,
        "description": spec.description,
        "collections": [
            {"name": name, "record": c.record, "id_format": c.id_format, "id_example": c.id_format.format(n=1),
             "fields": ", ".join(f"{f} {_type_text(s)}" for f, s in c.fields.items())}
            for name, c in spec.collections.items()
        ],
        "operations": [
            {"tool": default_tool_name(spec.name, op), "endpoint": op.endpoint, "access": op.access,
             "collection": op.collection, "effect": op.effect, "description": op.description,
             "parameters": op.parameters}
            for op in spec.operations
        ],
    }


@cache
def catalogue_text(services: tuple[str, ...]) -> str:
    """The catalogue section of the brief for these services (rendered once per service list)."""
    specs = [get_service(name) for name in services]
    unknown = [name for name, spec in zip(services, specs, strict=True) if spec is None]
    if unknown:
        raise PromptError(f"unknown service {unknown[0]!r}; known: {', '.join(sorted(catalogue()))}")
    return render("catalogue.j2", services=[service_context(spec) for spec in specs if spec is not None])


def _brief(capability: Capability, template: WorkflowTemplate, seed: int) -> dict[str, Any]:
    try:
        services = catalogue_text(tuple(template.services))
    except PromptError as exc:
        raise PromptError(f"workflow template {template.name!r}: {exc}") from exc
    return {
        "capability": capability.model_dump(include={"name", "description", "skill", "check_kinds"}),
        "template": template.model_dump(exclude={"package"}),
        "catalogue": services,
        "seed": seed,
    }


# --------------------------------------------------------------------------- prompts


@cache
def system_prompt() -> str:
    """The constant system message: contract, check language, verification codes, an example."""
    return render(
        "system.j2",
        now=DEFAULT_NOW,
        pass_threshold=PASS_THRESHOLD,
        judge_max_weight=JUDGE_MAX_WEIGHT,
        safety_kinds=list(SAFETY_KINDS),
        check_kinds=check_language(),
        matchers=_one_line(matchers.__doc__),
        codes=[(code.value, text) for code, text in DESCRIPTIONS.items()],
        example=(prompts_dir() / EXAMPLE_FILE).read_text(encoding="utf-8").strip(),
    )


def generate_prompt(capability: Capability, template: WorkflowTemplate, seed: int) -> str:
    """The brief for one new package."""
    return render("generate.j2", **_brief(capability, template, seed))


def repair_prompt(capability: Capability, template: WorkflowTemplate, seed: int,
                  parent: TaskPackage, findings: list[Finding]) -> str:
    """The brief, the rejected package (without id and provenance) and why it was rejected."""
    return render(
        "repair.j2",
        **_brief(capability, template, seed),
        rejected=canonical_json(parent.content()),
        findings=[{"code": f.code.value, "meaning": DESCRIPTIONS[f.code], "message": f.message,
                   "step": f.step, "check": f.check} for f in findings],
    )


def messages_for(attempt: Attempt, capabilities: Mapping[str, Capability]) -> list[ChatCompletionMessageParam]:
    """The chat messages for an attempt: a repair (attempt > 1 with a ``parent``) renders
    ``repair.j2``, anything else ``generate.j2``; both follow the system prompt."""
    try:
        capability, template = find_template(capabilities, attempt.capability, attempt.template)
    except UnknownName as exc:
        raise PromptError(str(exc)) from None
    if attempt.attempt > 1 and attempt.parent is not None:
        user = repair_prompt(capability, template, attempt.item_seed, attempt.parent, attempt.findings)
    else:
        user = generate_prompt(capability, template, attempt.item_seed)
    return [{"role": "system", "content": system_prompt()}, {"role": "user", "content": user}]
