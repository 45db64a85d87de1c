"""The capability taxonomy and its workflow templates, loaded from ``capabilities/*.yaml``.

One file per capability; adding a workflow template edits that one file. ``capabilities/pools/``
holds the content pools (people, companies, products, ...) that the offline generator draws from.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field

from pipeline.core.errors import UserError
from pipeline.core.paths import capabilities_dir


class WorkflowTemplate(BaseModel):
    """A workflow: the services it uses, its step pattern, the slots to fill and the checks it implies.

    ``package`` is a Jinja2 template (rendered in a sandbox) that, given the filled slots, yields
    the package as YAML; the LLM generator shows the other fields to the model as the brief.
    ``tools`` names the tools a package offers (``<service>_<operation>``, see
    ``pipeline.core.services.default_tool_name``), including reads the reference does not need; the
    offline generator copies their endpoints and parameters from the service catalogue.
    """

    model_config = ConfigDict(extra="forbid")
    name: str
    description: str
    services: list[str] = Field(min_length=1)
    difficulty: str = "medium"
    steps: list[str] = Field(min_length=1)
    slots: dict[str, Any] = Field(default_factory=dict)
    checks: list[str] = Field(min_length=1)
    tools: list[str] = Field(default_factory=list)
    package: str = ""


class Capability(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str
    description: str
    skill: str
    check_kinds: list[str] = Field(min_length=1)
    knobs: dict[str, Any] = Field(default_factory=dict)
    templates: list[WorkflowTemplate] = Field(min_length=1)

    def template(self, name: str) -> WorkflowTemplate | None:
        return next((t for t in self.templates if t.name == name), None)

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
        cap = Capability.model_validate(yaml.safe_load(path.read_text()))
        if cap.name != path.stem:
            raise ValueError(f"{path.name}: capability name {cap.name!r} must match the file name")
        out[cap.name] = cap
    return out


class UnknownName(UserError):
    """A capability or workflow template the taxonomy does not have; the message lists the known ones."""


def find_capability(capabilities: Mapping[str, Capability], name: str) -> Capability:
    cap = capabilities.get(name)
    if cap is None:
        raise UnknownName(f"unknown capability {name!r}; known: {', '.join(sorted(capabilities))}")
    return cap


def find_template(capabilities: Mapping[str, Capability], capability: str,
                  template: str) -> tuple[Capability, WorkflowTemplate]:
    cap = find_capability(capabilities, capability)
    tpl = cap.template(template)
    if tpl is None:
        known = ", ".join(t.name for t in cap.templates)
        raise UnknownName(f"capability {capability!r} has no template {template!r}; known: {known}")
    return cap, tpl
