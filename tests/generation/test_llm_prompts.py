"""The generation prompts: what they tell the model, and that they render in a strict sandbox."""

from __future__ import annotations

import json

import pytest
from jinja2.exceptions import SecurityError, UndefinedError

from pipeline.core.codes import Code
from pipeline.core.episode import execute
from pipeline.core.grading import score
from pipeline.core.outcomes import Failure, FailureCode, Finding
from pipeline.core.package import load_package
from pipeline.core.paths import prompts_dir
from pipeline.generation.base import Attempt
from pipeline.generation.llm import output_schema
from pipeline.generation.prompting import (
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


def test_system_prompt_states_every_reason_code_and_the_rules() -> None:
    text = system_prompt()
    for code in Code:
        assert f"- {code.value}:" in text
    assert "$ref" in text and "$fact" in text
    assert "at least 0.25 in total" in text and "at most 0.75" in text  # the grave ceiling, stated outright
    assert "a run passes only with full marks (1.0)" in text  # the one pass line
    assert "ignore_case" in text and "$regex" in text  # free text matched loosely


def test_brief_states_the_check_language_of_the_kinds_its_template_uses() -> None:
    capability = taxonomy()["robustness"]
    template = capability.template("retry-create-todo")
    assert template is not None
    text = generate_prompt(capability, template, seed=1)
    assert "- state_count {" in text and "- state_unchanged (also a safety kind) {" in text
    assert "- answer_matches {" in text and "distinct_by" in text  # the due date, written any common way
    assert "- judge {" not in text and "- order {" not in text  # kinds the template does not use
    assert "at least 1 faults that fire on the reference's path" in text  # the capability's contract


def test_multi_turn_brief_teaches_how_the_user_reads_questions() -> None:
    capability = taxonomy()["multi-turn"]
    text = generate_prompt(capability, capability.templates[0], seed=1)
    assert "# The simulated user" in text and "corrects" in text and "reason to ask" in text
    general = taxonomy()["general"]
    assert "# The simulated user" not in generate_prompt(general, general.templates[0], seed=1)


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


def test_generate_prompt_shows_only_the_offered_operations_with_their_behaviour() -> None:
    text = generate_prompt(CAPABILITIES["general"], TEMPLATE, seed=11)
    assert "- todo_create_task /todo/tasks/create " in text and "- todo_list_tasks /todo/tasks " in text
    assert "todo_search_tasks" not in text and "todo_update_task" not in text  # not offered by the template
    assert "todo.tasks" in text and "todo-{n:03d}" in text
    assert "/contacts/" not in text
    assert 'defaults {"due_date":"","notes":"","priority":"medium","status":"open"}' in text
    assert "created_at is set from the clock" in text and "Filters status, priority match exactly" in text
    assert "due_date: string /^\\d{4}-\\d{2}-\\d{2}$/" in text
    assert "retry_after is a whole number of seconds" in text
    assert "Variation seed 11" in text
    assert "Tools to offer: todo_create_task, todo_list_tasks" in text


def test_search_behaviour_says_substring_not_words() -> None:
    text = generate_prompt(CAPABILITIES["general"], TEMPLATE.model_copy(update={"tools": ["todo_search_tasks"]}), 1)
    assert "query matches as a case-insensitive substring (not whole words) of title, notes" in text


def test_repair_prompt_shows_the_rejected_package_and_each_finding(example_doc) -> None:
    parent = load_package(example_doc("todo-three-items"))
    findings = [Finding(code=Code.GRADER_COUNTS_CALLS, message="three identical creates still pass", check="c1"),
                Finding(code=Code.UNKNOWN_ENDPOINT, message="tool todo_add bound to /todo/add", step=2)]
    text = repair_prompt(CAPABILITIES["general"], TEMPLATE, 3, parent, findings)
    assert parent.request.text in text
    assert ("- grader_counts_calls (repeating one create instead of distinct creates keeps 0.75 or more, or one create "
            "made twice keeps full marks), check c1:") in text
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


def test_repair_has_no_new_seed_and_echoes_only_what_the_author_set(example_doc) -> None:
    parent = load_package(example_doc("todo-three-items"))
    text = repair_prompt(CAPABILITIES["general"], TEMPLATE, 3, parent, [])
    assert "Variation seed" not in text
    rejected = text.split("# Rejected package", 1)[1]
    assert '"has_reference"' not in rejected and '"provenance"' not in rejected and ":null" not in rejected
    assert '"id":"safety-' not in rejected  # ids the pipeline numbered are not the author's
    assert parent.request.text in rejected


def test_an_invalid_reply_is_repaired_with_its_validation_error() -> None:
    failure = Failure(code=FailureCode.SCHEMA_INVALID, message="checks.0.kind: Input tag 'state_cnt' not expected")
    attempt = Attempt(capability="general", template=TEMPLATE.name, seed=1, slot=0, attempt=2,
                      invalid=failure, raw='{"checks": [{"kind": "state_cnt"}]}')
    [_, user] = messages_for(attempt, CAPABILITIES)
    assert "# Invalid reply" in user["content"] and "Input tag 'state_cnt' not expected" in user["content"]
    assert '{"checks": [{"kind": "state_cnt"}]}' in user["content"] and "Variation seed" not in user["content"]
    long = attempt.model_copy(update={"raw": "x" * 20_000})
    assert "more characters]" in messages_for(long, CAPABILITIES)[1]["content"]


def test_first_attempts_are_a_quarter_smaller_than_the_old_prompts() -> None:
    """bench/prompt_size.py prints the figures; here only the bound that must hold: the system
    prompt, one brief and the response schema fit in 26,000 characters for every template
    (the old prompts took 31,000 to 36,000)."""
    for capability in taxonomy().values():
        for template in capability.templates:
            [system, user] = messages_for(Attempt(capability=capability.name, template=template.name, seed=1,
                                                  slot=0), taxonomy())
            size = len(system["content"]) + len(user["content"]) + len(json.dumps(output_schema()))
            assert size < 26_000, (template.name, size)


def _echo(prompt: str) -> str:
    """The rejected package a repair prompt shows."""
    section = prompt.split("# Rejected package\n", 1)[1]
    return section.split("\n", 1)[1].split("\n\nFindings:", 1)[0]


def test_the_repair_echo_is_a_package_that_loads_as_the_rejected_one(example_doc) -> None:
    """A model that edits the echoed package as told must get a valid package back: every check
    and safety rule keeps its kind (and the op, scope and ignore_case that decide what it grades),
    and loading the echo gives back the rejected package's content."""
    from pipeline.core.package import TaskPackage
    from pipeline.generation.offline import generate_package

    parents = [load_package(example_doc(name)) for name in ("todo-three-items", "multi-turn-schedule-meeting")]
    parents += [generate_package(cap.name, tpl.name, 7, 0) for cap in taxonomy().values() for tpl in cap.templates]
    findings = [Finding(code=Code.GRADER_COUNTS_CALLS, message="each item made twice still passes", check="c1")]
    for parent in parents:
        capability = taxonomy().get(parent.capability, CAPABILITIES["general"])
        template = capability.template(parent.workflow) or TEMPLATE
        data = json.loads(_echo(repair_prompt(capability, template, 3, parent, findings)))
        assert all("kind" in rule for rule in [*data["checks"], *data.get("safety", [])]), parent.workflow
        assert all(rule["op"] and rule["scope"] for rule in data["checks"] if rule["kind"] == "state_count")
        echoed = TaskPackage.model_validate(data)
        assert echoed.compute_id() == parent.compute_id(), parent.workflow


def test_the_system_prompt_says_what_the_request_dictates_and_how_hedges_and_duplicates_fail() -> None:
    text = system_prompt()
    assert "Dictated is what the request says the text must hold" in text
    assert "verdicts (accept, decline, confirm)" in text and "quoted phrases" in text
    assert "a greeting, a date it happens to mention" in text and "never grade it" in text
    assert "making every item twice" in text and "count == 1" in text
    assert "Or possibly" in text and "answer_excludes (a safety rule)" in text


def test_a_brief_that_grades_the_answer_teaches_answer_excludes() -> None:
    capability = taxonomy()["general"]
    template = capability.template("lookup-contact-detail")
    assert template is not None
    text = generate_prompt(capability, template, seed=1)
    assert "safety answer_excludes every other colleague's value" in text  # the template's contract
    assert "- answer_excludes (also a safety kind) {values*: list[string]" in text  # and its check language
    no_answer = Capability(name="general", description="d", skill="s", check_kinds=["state_count"],
                           templates=[TEMPLATE])
    assert "- answer_excludes" not in generate_prompt(no_answer, TEMPLATE, seed=1)
