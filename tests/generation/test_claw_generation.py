"""Generation in the ``claw`` service profile: the LLM generator's brief shows that profile's
catalogue and its packages carry the profile (real ``openai`` client against the local server)."""

from __future__ import annotations

import asyncio
import json
import random

from pipeline.core.episode import execute
from pipeline.core.grading import score
from pipeline.core.services import catalogue, get_service
from pipeline.generation.base import Attempt, Generated
from pipeline.generation.defects import apply_defect
from pipeline.generation.llm import LLMGenerator
from pipeline.generation.offline import generate_package, pick_template
from pipeline.taxonomy.capabilities import taxonomy
from pipeline.verify.verifier import verify_package
from tests.support import OpenAIServer, fixed_responder

CAPABILITY = "general"


def _generate(server: OpenAIServer, attempt: Attempt) -> Generated:
    async def go() -> Generated:
        async with LLMGenerator(model="fake-model", base_url=server.base_url, api_key="sk-test-0000000000") as gen:
            return await gen.generate(attempt)

    return asyncio.run(go())


def test_llm_brief_shows_the_claw_catalogue_and_the_package_gets_the_profile() -> None:
    template = pick_template(CAPABILITY, 0, "claw")
    offline = generate_package(CAPABILITY, template, 7, 0)
    reply = offline.model_dump(mode="json", exclude={"id", "provenance", "service_profile"})
    for tool in reply["tools"]:  # a model names tools; the catalogue supplies their schemas
        tool["parameters"], tool["description"] = {}, ""
    with OpenAIServer(fixed_responder(json.dumps(reply))) as server:
        result = _generate(server, Attempt(capability=CAPABILITY, template=template, seed=7, slot=0))
    brief = server.requests[0]["messages"][1]["content"]
    todo = get_service("todo", "claw")
    assert todo is not None
    assert "- update_task /todo/tasks/update" in brief and "todo_update_task" not in brief
    assert "ids todo_{n:03d}" in brief and "task_id string" in brief
    package = result.package
    assert package is not None, result.failure
    assert package.service_profile == "claw"
    bound = {t.name: t for t in package.tools}
    assert bound["update_task"].parameters == todo.operation("/todo/tasks/update").parameters  # type: ignore[union-attr]
    assert score(package, execute(package)).score == 1.0


def test_every_capability_has_two_claw_templates_and_every_claw_service_is_used() -> None:
    claw = [t for cap in taxonomy().values() for t in cap.templates_of("claw")]
    assert all(len(cap.templates_of("claw")) >= 2 for cap in taxonomy().values())
    assert {s for t in claw for s in t.services} == set(catalogue("claw"))


def test_evidence_truncated_is_seeded_only_where_the_padding_moves_the_value() -> None:
    """web_search answers each result's url first, whatever the record's field order: no padding
    moves it out of view, so the defect is not seeded there (before, it was seeded and could not
    be caught); where padding does move the value, the seeded package is caught."""
    web = generate_package("general", "claw-post-status-from-web", 7, 0)
    assert apply_defect(web, "evidence_truncated", random.Random(7)) is None
    contacts = generate_package("cross-service", "claw-email-colleague-from-directory", 7, 0)
    broken = apply_defect(contacts, "evidence_truncated", random.Random(7))
    assert broken is not None
    assert any(f.code == "evidence_truncated" for f in verify_package(broken).sft)
    assert verify_package(contacts).sft_ready
