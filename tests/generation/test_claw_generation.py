"""Generation in the ``claw`` service profile: the LLM generator's brief shows that profile's
catalogue and its packages carry the profile (real ``openai`` client against the local server)."""

from __future__ import annotations

import asyncio
import json

from pipeline.core.episode import execute
from pipeline.core.grading import score
from pipeline.core.services import get_service
from pipeline.generation.base import Attempt, Generated
from pipeline.generation.llm import LLMGenerator
from pipeline.generation.offline import generate_package, pick_template
from pipeline.taxonomy.capabilities import taxonomy
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


def test_every_capability_has_claw_templates_over_a_spread_of_services() -> None:
    claw = [t for cap in taxonomy().values() for t in cap.templates_of("claw")]
    assert all(cap.templates_of("claw") for cap in taxonomy().values())
    assert len({s for t in claw for s in t.services}) >= 7
