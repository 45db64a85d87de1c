"""Each workflow template's prose (what the LLM generator is told) is complete and says what the
template's packages do: the tools, the check kinds and the fault statuses it names are the ones
its rendered packages use."""

from __future__ import annotations

import re

import pytest

from pipeline.core.services import catalogue, default_tool_name, profile_names
from pipeline.generation.offline import generate_package
from pipeline.generation.prompting import check_language
from pipeline.taxonomy.capabilities import taxonomy

TEMPLATES = [(c.name, t.name) for c in taxonomy().values() for t in c.templates]
SLOTS = range(8)
KINDS = [k["kind"] for k in check_language()]
TOOLS = {default_tool_name(s.name, op, profile) for profile in profile_names()
         for s in catalogue(profile).values() for op in s.operations}


def _prose(capability: str, template: str) -> str:
    tpl = taxonomy()[capability].template(template)
    assert tpl is not None
    return "\n".join([tpl.description, *tpl.steps, *tpl.checks])


@pytest.mark.parametrize(("capability", "template"), TEMPLATES)
def test_template_prose_is_complete(capability: str, template: str) -> None:
    tpl = taxonomy()[capability].template(template)
    assert tpl is not None and tpl.description.strip() and tpl.steps and tpl.checks
    assert all(line.strip() for line in [*tpl.steps, *tpl.checks])
    named = {t for t in re.findall(r"\b[a-z]+_[a-z_]+\b", _prose(capability, template)) if t in TOOLS}
    assert named <= set(tpl.tools), f"prose names tools the template does not offer: {named - set(tpl.tools)}"


@pytest.mark.parametrize(("capability", "template"), TEMPLATES)
def test_template_prose_names_the_check_kinds_and_statuses_its_packages_use(capability: str, template: str) -> None:
    prose = _prose(capability, template)
    tpl = taxonomy()[capability].template(template)
    assert tpl is not None
    named_kinds = set(tpl.named_check_kinds(KINDS))
    packages = [generate_package(capability, template, 7, slot) for slot in SLOTS]
    used_kinds = {c.kind for p in packages for c in [*p.checks, *p.safety]}
    assert used_kinds <= named_kinds, f"kinds used but not named in the checks prose: {used_kinds - named_kinds}"
    assert named_kinds <= used_kinds, f"kinds named but never used: {named_kinds - used_kinds}"
    named_statuses = {int(s) for s in re.findall(r"\b([45]\d\d)\b", prose)}
    used_statuses = {f.status for p in packages for f in p.faults}
    assert named_statuses == used_statuses, f"prose says {sorted(named_statuses)}, packages fail with {sorted(used_statuses)}"


def test_a_kind_that_is_also_a_word_is_named_only_where_a_check_line_starts_with_it() -> None:
    tpl = taxonomy()["general"].templates[0].model_copy(update={"checks": [
        "state_count one order per item (0.5)", "order the create before the message (0.2)",
        "answer_contains the total; called inventory_list_items", "safety not_called gmail_send"]})
    assert tpl.named_check_kinds(KINDS) == [k for k in KINDS if k in
                                            {"state_count", "order", "answer_contains", "called", "not_called"}]
