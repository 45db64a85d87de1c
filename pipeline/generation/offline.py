"""The built-in offline generator: task packages rendered from workflow templates, no model involved.

One item is (capability, template, seed, slot, attempt). It gets its own ``random.Random`` seeded
from exactly those five values (never wall time or the global RNG), which fills the template's
slots from the content pools (``pipeline.generation.slots``); the template's ``package`` body is
rendered in a sandbox and parsed (``pipeline.generation.render``). The generator then adds what a
body never writes: capability, workflow, difficulty, services, the service profile (the
template's), the tools (endpoint, description and parameters copied from that profile's service
catalogue) and provenance. A repair (attempt > 1) is a
fresh draw of the same template.

With ``defect_rate`` > 0, a first attempt is, with that probability (drawn from the item's RNG),
given a defect by ``pipeline.generation.defects.inject_defect``; its label goes to
``Generated.defect``, never into the package.
"""

from __future__ import annotations

from random import Random
from typing import Any

import jinja2
import yaml
from pydantic import ValidationError

from pipeline.core.errors import first_validation_error
from pipeline.core.outcomes import Failure, FailureCode
from pipeline.core.package import TaskPackage
from pipeline.core.services import DEFAULT_PROFILE
from pipeline.generation.base import Attempt, Generated
from pipeline.generation.render import parse_body, render_body
from pipeline.generation.slots import fill_slots
from pipeline.generation.tools import catalogue_tool
from pipeline.taxonomy.capabilities import (
    Capability,
    WorkflowTemplate,
    find_template,
    profile_templates,
    taxonomy,
)

GENERATOR_NAME = "offline"
BODY_FIELDS = frozenset({"request", "user", "now", "initial_state", "checks", "safety", "faults", "reference"})


class TemplateError(ValueError):
    """A template rendered to something that is not a valid package; ``raw`` is the rendered text."""

    def __init__(self, message: str, raw: str | None = None) -> None:
        super().__init__(message)
        self.raw = raw


def pick_template(capability: str, slot: int, profile: str = DEFAULT_PROFILE) -> str:
    """The template for ``slot``: round-robin over the capability's templates of service profile
    ``profile``, in file order (``UnknownName`` when it has none: ``profile_templates``)."""
    templates = profile_templates(taxonomy(), capability, profile)
    return templates[slot % len(templates)].name


def item_rng(capability: str, template: str, seed: int, slot: int, attempt: int) -> Random:
    """The RNG of one item, a function of these five values only."""
    return Random(f"{GENERATOR_NAME}:{seed}:{capability}:{template}:{slot}:{attempt}")


def _render(cap: Capability, tpl: WorkflowTemplate, rng: Random) -> tuple[dict[str, Any], str]:
    """The parsed package body and its rendered text."""
    context = fill_slots(tpl.slots, rng)
    context["knobs"] = cap.knob_values(tpl.difficulty)
    text = render_body(tpl.package, context)
    try:
        body = parse_body(text)
    except (ValueError, yaml.YAMLError) as exc:
        raise TemplateError(f"{cap.name}/{tpl.name}: the package body is not YAML: {exc}", raw=text) from exc
    extra = set(body) - BODY_FIELDS
    if extra:
        raise TemplateError(f"{cap.name}/{tpl.name}: a package body writes only {sorted(BODY_FIELDS)}; "
                            f"it also wrote {sorted(extra)}", raw=text)
    return body, text


def _build(capability: str, template: str, seed: int, slot: int, attempt: int) -> tuple[TaskPackage, Random]:
    """The package of one item without its id (verification computes it), and the item's RNG."""
    cap, tpl = find_template(taxonomy(), capability, template)
    rng = item_rng(capability, template, seed, slot, attempt)
    data, text = _render(cap, tpl, rng)
    data.update(
        capability=cap.name, workflow=tpl.name, difficulty=tpl.difficulty, services=list(tpl.services),
        service_profile=tpl.profile, tools=[catalogue_tool(name, tpl.profile).model_dump() for name in tpl.tools],
        provenance={"generator": GENERATOR_NAME, "template": tpl.name, "seed": seed, "attempt": attempt,
                    "parent": None},
    )
    try:
        package = TaskPackage.model_validate(data)
    except ValidationError as exc:
        raise TemplateError(f"{cap.name}/{tpl.name}: not a valid package: {first_validation_error(exc)}",
                            raw=text) from exc
    return package, rng


def generate_package(capability: str, template: str, seed: int, slot: int, attempt: int = 1) -> TaskPackage:
    """The package of one item, with its id set. Same inputs, same package (byte for byte).

    Raises ``UserError`` for an unknown capability or template, and ``ValueError`` (``TemplateError``
    with the rendered text, ``SlotError``) or ``jinja2.TemplateError`` for a broken template.
    """
    return _build(capability, template, seed, slot, attempt)[0].with_id()


class OfflineGenerator:
    """The ``Generator`` that renders workflow templates; ``defect_rate`` in [0, 1] (see module doc)."""

    name = GENERATOR_NAME
    model: str | None = None

    def __init__(self, defect_rate: float = 0.0) -> None:
        if not 0.0 <= defect_rate <= 1.0:
            raise ValueError(f"defect_rate must be within [0, 1], got {defect_rate}")
        self.defect_rate = defect_rate

    async def generate(self, attempt: Attempt) -> Generated:
        try:
            package, rng = _build(attempt.capability, attempt.template, attempt.seed, attempt.slot, attempt.attempt)
        except TemplateError as exc:
            return Generated(failure=Failure(code=FailureCode.TEMPLATE_ERROR, message=str(exc)), raw=exc.raw)
        except (ValueError, jinja2.TemplateError) as exc:
            return Generated(failure=Failure(code=FailureCode.TEMPLATE_ERROR,
                                             message=f"{attempt.capability}/{attempt.template}: {exc}"))
        if attempt.attempt == 1 and self.defect_rate > 0 and rng.random() < self.defect_rate:
            from pipeline.generation.defects import inject_defect

            injected = inject_defect(package, rng)
            if injected is not None:
                defective, label = injected
                return Generated(package=defective, defect=label)
        return Generated(package=package)
