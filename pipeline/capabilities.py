"""The capability taxonomy and its workflow templates, loaded from ``capabilities/*.yaml``.

One file per capability; adding a workflow template edits that one file. ``capabilities/pools/``
holds the content pools (people, companies, products, ...) that the offline generator draws from.
"""

from __future__ import annotations

from functools import cache
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field

from pipeline.paths import capabilities_dir


class WorkflowTemplate(BaseModel):
    """A workflow: the services it uses, its step pattern, the slots to fill and the checks it implies.

    ``package`` is a Jinja2 template (rendered in a sandbox) that, given the filled slots, yields
    the package as YAML; the LLM generator shows the other fields to the model as the brief.
    """

    model_config = ConfigDict(extra="forbid")
    name: str
    description: str
    services: list[str] = Field(min_length=1)
    difficulty: str = "medium"
    steps: list[str] = Field(min_length=1)
    slots: dict[str, Any] = Field(default_factory=dict)
    checks: list[str] = Field(min_length=1)
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
