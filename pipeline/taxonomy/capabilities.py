"""The capability taxonomy and its workflow templates, loaded from ``capabilities/*.yaml``.

One file per capability; adding a workflow template edits that one file. ``capabilities/pools/``
holds the content pools (people, companies, products, ...) that the offline generator draws from.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import cache
from typing import Any

from pydantic import Field

from pipeline.core import yaml_text
from pipeline.core.errors import UserError
from pipeline.core.paths import capabilities_dir
from pipeline.core.services import DEFAULT_PROFILE, ProfileName, unknown_profile
from pipeline.core.strict_model import StrictModel


class WorkflowTemplate(StrictModel):
    """A workflow: the services it uses, its step pattern, the slots to fill and the checks it implies.

    ``package`` is a Jinja2 template (rendered in a sandbox) that, given the filled slots, yields
    the package as YAML; the LLM generator shows the other fields to the model as the brief.
    ``profile`` is the service profile whose catalogue the template's services, tools and records
    come from (``default``, or e.g. ``claw``: ``pipeline.core.services.profile_names``); its
    packages carry it as ``service_profile``, and a run of one profile uses only its templates.
    ``tools`` names the tools a package offers (``default_tool_name`` in that profile:
    ``<service>_<operation>`` by default, the operation name elsewhere), including reads the
    reference does not need; the offline generator copies their endpoints and parameters from the
    profile's service catalogue.
    """

    name: str
    description: str
    services: list[str] = Field(min_length=1)
    difficulty: str = "medium"
    profile: ProfileName = DEFAULT_PROFILE
    steps: list[str] = Field(min_length=1)
    slots: dict[str, Any] = Field(default_factory=dict)
    checks: list[str] = Field(min_length=1)
    tools: list[str] = Field(default_factory=list)
    package: str = ""

    def named_check_kinds(self, kinds: list[str]) -> list[str]:
        """The check kinds of ``kinds`` that the ``checks`` prose names, in ``kinds``' order: a kind
        with an underscore anywhere as a word (``state_count``), one without (``order``,
        ``called``) only where a line, or a "safety" clause, starts with it, since it is also an
        English word ("one order per item")."""
        def named(kind: str) -> bool:
            pattern = rf"\b{kind}\b" if "_" in kind else rf"(?:^|\bsafety\s+|;\s*){kind}\b"
            return any(re.search(pattern, line) for line in self.checks)

        return [k for k in kinds if named(k)]


class Contract(StrictModel):
    """What every package of a capability must contain, as minimum counts (0: no requirement).
    The verifier enforces it (``pipeline/verify/contracts.py``, code ``capability_unmet``)."""

    faults: int = Field(default=0, ge=0,
                                description="Faults that fire on the reference's path and are recovered from.")
    revealed_facts: int = Field(default=0, ge=0,
                                description="Facts the reference gets the user to reveal, without which it cannot reach full score.")
    live_safety_rules: int = Field(default=0, ge=0,
                                description="Safety rules an agent could break with the tools offered (not vacuous) and that "
                                "the task tempts it to break.")
    services_acted_on: int = Field(default=0, ge=0,
                                description="Services the reference calls successfully.")
    dependent_steps: int = Field(default=0, ge=0,
                                description="Reference calls whose arguments use something an earlier step showed "
                                "(a ``$ref``, a revealed fact, or a value of an earlier tool result).")
    aggregated_records: int = Field(default=0, ge=0,
                                description="Records the graded answer is computed from (a total, a count) or gathered from.")


class Capability(StrictModel):
    name: str
    description: str
    skill: str
    check_kinds: list[str] = Field(min_length=1)
    contract: Contract = Field(default_factory=Contract)
    knobs: dict[str, Any] = Field(default_factory=dict)
    templates: list[WorkflowTemplate] = Field(min_length=1)

    def template(self, name: str) -> WorkflowTemplate | None:
        return next((t for t in self.templates if t.name == name), None)

    def templates_of(self, profile: str) -> list[WorkflowTemplate]:
        """The templates of service profile ``profile``, in file order (none for an unknown one)."""
        return [t for t in self.templates if t.profile == profile]

    def knob_values(self, difficulty: str) -> dict[str, Any]:
        """Each knob's value at ``difficulty``: a knob written as ``{easy: .., medium: .., hard: ..}``
        gives the entry for that difficulty, any other knob value is used as is."""
        return {
            name: value[difficulty] if isinstance(value, dict) and difficulty in value else value
            for name, value in self.knobs.items()
        }


@cache
def taxonomy() -> dict[str, Capability]:
    """Every capability shipped in ``capabilities/``, by name."""
    out: dict[str, Capability] = {}
    for path in sorted(capabilities_dir().glob("*.yaml")):
        cap = Capability.model_validate(yaml_text.load(path.read_text(encoding="utf-8")))
        if cap.name != path.stem:
            raise ValueError(f"{path.name}: capability name {cap.name!r} must match the file name")
        out[cap.name] = cap
    return out


@cache
def contracts() -> dict[str, Contract]:
    """Every shipped capability's contract, by name: ``taxonomy()[name].contract``, read without
    parsing the workflow templates (the verifier needs the contracts alone, and the templates are
    most of each file). A file whose top level is written in block style, each key at the start
    of a line as in every shipped file, has its ``contract`` entry parsed alone; any other is
    parsed whole."""
    return {path.stem: _contract(path.read_text(encoding="utf-8"))
            for path in sorted(capabilities_dir().glob("*.yaml"))}


_TOP_KEY = re.compile(r"^(?=[A-Za-z_][\w-]*[ \t]*:)", re.MULTILINE)
"""The start of a line holding a plain top-level key: where a block-style file's entries begin."""
_OTHER_TOP_LINE = re.compile(r"^(?=\S)(?![A-Za-z_][\w-]*[ \t]*:|-(?:\s|$)|#|---|\.\.\.)", re.MULTILINE)
"""A line at the left edge that is no plain key, sequence item, comment, document marker or blank:
the top level is not plain block style (a flow mapping, a quoted key)."""


def _contract(text: str) -> Contract:
    """The ``contract`` of a capability file's text (see ``contracts``)."""
    if _OTHER_TOP_LINE.search(text):
        data = yaml_text.load(text)
    else:
        entries = [e for e in _TOP_KEY.split(text) if re.match(r"contract[ \t]*:", e)]
        data = yaml_text.load(entries[-1]) if entries else {}  # the last of repeated keys wins, as in a whole parse
    found = data.get("contract") if isinstance(data, dict) else None
    return Contract.model_validate(found if found is not None else {})


class UnknownName(UserError):
    """A capability or workflow template the taxonomy does not have; the message lists the known ones."""


def find_capability(capabilities: Mapping[str, Capability], name: str) -> Capability:
    cap = capabilities.get(name)
    if cap is None:
        raise UnknownName(f"unknown capability {name!r}; known: {', '.join(sorted(capabilities))}")
    return cap


def check_profile(profile: str) -> str:
    """``profile`` when it is a shipped service profile, else ``UnknownName`` listing them."""
    problem = unknown_profile(profile)
    if problem:
        raise UnknownName(problem)
    return profile


def profile_templates(capabilities: Mapping[str, Capability], capability: str,
                      profile: str) -> list[WorkflowTemplate]:
    """The templates of ``capability`` in service profile ``profile``, in file order; ``UnknownName``
    for an unknown capability or profile, or a capability with no template of that profile."""
    cap = find_capability(capabilities, capability)
    templates = cap.templates_of(check_profile(profile))
    if not templates:
        having = sorted(c.name for c in capabilities.values() if c.templates_of(profile))
        raise UnknownName(f"capability {capability!r} has no workflow template of service profile {profile!r}; "
                          f"capabilities with one: {', '.join(having) or 'none'}")
    return templates


def find_template(capabilities: Mapping[str, Capability], capability: str,
                  template: str) -> tuple[Capability, WorkflowTemplate]:
    cap = find_capability(capabilities, capability)
    tpl = cap.template(template)
    if tpl is None:
        known = ", ".join(t.name for t in cap.templates)
        raise UnknownName(f"capability {capability!r} has no template {template!r}; known: {known}")
    return cap, tpl
