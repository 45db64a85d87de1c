"""The generation prompts: what they tell the model, and that they render in a strict sandbox."""

from __future__ import annotations

import pytest
from jinja2.exceptions import SecurityError, UndefinedError

from pipeline.core.codes import Code
from pipeline.core.episode import execute
from pipeline.core.grading import score
from pipeline.core.outcomes import Finding
from pipeline.core.package import load_package
from pipeline.core.paths import prompts_dir
from pipeline.core.services import catalogue, default_tool_name
from pipeline.generate.base import Attempt
from pipeline.generate.prompting import (
    EXAMPLE_FILE,
    PromptError,
    check_language,
    environment,
    generate_prompt,
    messages_for,
    repair_prompt,
    system_prompt,
)
from pipeline.taxonomy.capabilities import Capability, WorkflowTemplate, taxonomy
from pipeline.verify.verifier import verify_package

TEMPLATE = WorkflowTemplate(
    name="create-several-todos", description="Add several distinct todo items from one request.",
    services=["todo"], steps=["create each item", "confirm the items"],
    slots={"count": [2, 3, 4]}, checks=["distinct created items, one per requested title"],
    tools=["todo_create_task", "todo_list_tasks"],
)
CAPABILITIES = {"general": Capability(
    name="general", description="Everyday office tasks.", skill="follow a request exactly",
    check_kinds=["state_count", "answer_contains"], templates=[TEMPLATE],
)}


def test_system_prompt_states_every_check_kind_and_reason_code() -> None:
    text = system_prompt()
    for kind in check_language():
        assert f"- {kind['kind']}" in text
    for code in Code:
        assert f"- {code.value}:" in text
    assert "distinct_by" in text and "$ref" in text and "$fact" in text


def test_check_language_has_each_kinds_own_required_fields() -> None:
    fields = {k["kind"]: k["fields"] for k in check_language()}
    assert "collection*: string" in fields["state_count"]
    assert "value*: integer" in fields["state_count"]
    assert "fact*: string" in fields["asked_user"]
    assert not any(f.startswith(("id", "weight", "kind")) for fs in fields.values() for f in fs)


def test_prompt_example_package_plays_to_full_score_and_is_accepted() -> None:
    package = load_package((prompts_dir() / EXAMPLE_FILE).read_text(encoding="utf-8"))
    assert score(package, execute(package)).score == 1.0
    assert verify_package(package).codes == []  # the model is shown a package the verifier accepts


def test_generate_prompt_shows_the_real_catalogue_of_the_template_services_only() -> None:
    text = generate_prompt(CAPABILITIES["general"], TEMPLATE, seed=11)
    todo = catalogue()["todo"]
    for op in todo.operations:
        assert f"- {default_tool_name('todo', op)} {op.endpoint} " in text
    assert "todo.tasks" in text and "todo-{n:03d}" in text
    assert "/contacts/" not in text
    assert "Variation seed 11" in text
    assert "Tools to offer: todo_create_task, todo_list_tasks" in text


def test_repair_prompt_shows_the_rejected_package_and_each_finding(example_doc) -> None:
    parent = load_package(example_doc("todo-three-items"))
    findings = [Finding(code=Code.GRADER_COUNTS_CALLS, message="three identical creates still pass", check="c1"),
                Finding(code=Code.UNKNOWN_ENDPOINT, message="tool todo_add bound to /todo/add", step=2)]
    text = repair_prompt(CAPABILITIES["general"], TEMPLATE, 3, parent, findings)
    assert parent.request.text in text
    assert "- grader_counts_calls (repeating one create instead of distinct creates still passes), check c1:" in text
    assert "- unknown_endpoint (a tool is bound to an endpoint its service does not offer), step 2: tool todo_add" in text
    assert "/todo/tasks/create" in text  # the brief and catalogue come along


def test_messages_for_renders_repair_only_for_a_later_attempt_with_a_parent(example_doc) -> None:
    parent = load_package(example_doc("todo-three-items"))
    first = messages_for(Attempt(capability="general", template=TEMPLATE.name, seed=1, slot=0), CAPABILITIES)
    repair = messages_for(Attempt(capability="general", template=TEMPLATE.name, seed=1, slot=0, attempt=2,
                                  parent=parent), CAPABILITIES)
    assert [m["role"] for m in first] == ["system", "user"]
    assert "Rejected package" not in first[1]["content"]
    assert "Rejected package" in repair[1]["content"]
    assert first[0]["content"] == repair[0]["content"]


@pytest.mark.parametrize(("capability", "template"), [("nope", TEMPLATE.name), ("general", "nope")])
def test_messages_for_unknown_capability_or_template_is_a_prompt_error(capability: str, template: str) -> None:
    with pytest.raises(PromptError, match="nope"):
        messages_for(Attempt(capability=capability, template=template, seed=1, slot=0), CAPABILITIES)


def test_unknown_service_in_a_template_is_a_prompt_error() -> None:
    broken = TEMPLATE.model_copy(update={"services": ["todo", "teleporter"]})
    with pytest.raises(PromptError, match="teleporter"):
        generate_prompt(CAPABILITIES["general"], broken, seed=1)


def test_prompt_environment_is_sandboxed_and_strict() -> None:
    env = environment()
    with pytest.raises(SecurityError):
        env.from_string("{{ x.__class__.__mro__[1].__subclasses__() }}").render(x=1)
    with pytest.raises(UndefinedError):
        env.from_string("{{ missing }}").render()


def test_every_shipped_template_renders_a_brief_naming_its_tools() -> None:
    templates = [(cap, tpl) for cap in taxonomy().values() for tpl in cap.templates]
    assert templates
    for cap, tpl in templates:
        text = generate_prompt(cap, tpl, seed=1)
        assert f"Workflow template: {tpl.name} " in text
        for tool in tpl.tools:
            assert f"\n- {tool} /" in text, (tpl.name, tool)
