"""``pipeline.env.task_env.TaskEnv``: reset/step/score over a package's world, simulated user and checks.

The key property: driving the environment with a package's reference (``play_reference``)
reproduces ``score(package, execute(package))`` exactly, for the examples and for generated
packages of every capability.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from pipeline.core.episode import execute
from pipeline.core.grading import score
from pipeline.core.package import TaskPackage, load_package
from pipeline.core.training_format import openai_tool
from pipeline.core.trajectory import trajectory_data
from pipeline.core.user import NEUTRAL_REPLY
from pipeline.core.world import World
from pipeline.env.task_env import Answer, Ask, TaskEnv, ToolCall, play_reference
from tests.conftest import REPO_ROOT  # noqa: E402

EXAMPLES = sorted((REPO_ROOT / "examples").glob("*.json"))
Docs = Callable[[str], dict[str, Any]]


def example(name: str) -> TaskPackage:
    return load_package((REPO_ROOT / "examples" / f"{name}.json").read_text())


def assert_replay_matches(package: TaskPackage) -> None:
    env = play_reference(package)
    expected = score(package, execute(package))
    assert env.score().model_dump() == expected.model_dump()


# --------------------------------------------------------------------------- the replay property


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_reference_replay_reproduces_execute_for_examples(path: Path) -> None:
    package = load_package(path.read_text())
    env = play_reference(package)
    assert env.score().model_dump() == score(package, execute(package)).model_dump()
    assert trajectory_data(env.trajectory()) == trajectory_data(execute(package))
    assert env.done


def _generated(per_capability: int) -> list[tuple[str, int]]:
    from pipeline.taxonomy.capabilities import taxonomy

    return [(cap, slot) for cap in sorted(taxonomy()) for slot in range(per_capability)]


GENERATED = _generated(20)


@pytest.mark.parametrize("capability", sorted({c for c, _ in GENERATED}))
def test_reference_replay_reproduces_execute_for_generated(capability: str) -> None:
    from pipeline.generation.offline import generate_package, pick_template

    for cap, slot in GENERATED:
        if cap == capability:
            package = generate_package(cap, pick_template(cap, slot), seed=11, slot=slot)
            assert_replay_matches(package)


def test_replay_recovers_from_injected_fault(todo_doc: dict[str, Any]) -> None:
    todo_doc["faults"] = [{"tool": "todo_create_task", "on_call": 1, "status": 503}]
    todo_doc["reference"] = [
        {"call": "todo_create_task", "args": {"title": "Book the venue"}, "expect_status": 503},
        {"call": "todo_create_task", "args": {"title": "Book the venue"}},
        {"answer": "Added: Book the venue."},
    ]
    package = load_package(todo_doc)
    env = play_reference(package)
    assert [s.status for s in env.episode.steps] == [503, 200, None]
    assert env.score().score == 1.0
    assert trajectory_data(env.trajectory()) == trajectory_data(execute(package))


def test_replay_records_an_unresolvable_call_as_an_error_and_calls_nothing(example_doc: Docs) -> None:
    doc = example_doc("contacts-send-message")
    doc["reference"][1]["args"]["contact_id"] = {"$ref": "steps[0].result.nothing[0].id"}
    package = load_package(doc)
    assert execute(package).steps[1].error
    env = play_reference(package)
    assert [s.kind for s in env.episode.steps] == ["call", "call", "answer"]
    assert env.episode.steps[1].error and env.episode.steps[1].status is None
    assert [a.tool for a in env.world.audit] == ["contacts_search"]
    assert env.score().model_dump() == score(package, execute(package)).model_dump()
    assert env.score().score < 1.0


def test_replay_resolves_refs_to_ask_replies(example_doc: Docs) -> None:
    doc = example_doc("multi-turn-schedule-meeting")
    doc["reference"][2]["args"]["title"] = {"$ref": "steps[1].revealed[0]", "prefix": "Sync on "}
    package = load_package(doc)
    env = play_reference(package)
    assert env.episode.steps[2].args["title"] == "Sync on day"
    assert_replay_matches(package)


# --------------------------------------------------------------------------- reset / step


def test_reset_returns_request_and_openai_tools() -> None:
    package = example("contacts-send-message")
    env = TaskEnv(package)
    obs = env.reset()
    assert obs.kind == "request"
    assert obs.text == package.request.text
    assert obs.tools == env.tools
    assert [t["function"]["name"] for t in obs.tools] == ["contacts_search", "contacts_send_message"]
    send = package.tool("contacts_send_message")
    assert obs.tools[1] == {"type": "function", "function": {
        "name": "contacts_send_message", "description": send.description, "parameters": send.parameters}}


def test_tool_call_observes_status_and_body() -> None:
    env = TaskEnv(example("contacts-send-message"))
    env.reset()
    found = env.step(ToolCall(name="contacts_search", arguments={"query": "Omar"}))
    assert found.observation.kind == "tool_result"
    assert found.observation.status == 200
    assert [c["id"] for c in found.observation.result["contacts"]] == ["c-102", "c-103"]
    assert json.loads(found.observation.text) == found.observation.result
    assert not found.done and found.reward == 0.0 and found.info == {"step": 0, "truncated": False}
    missing = env.step({"type": "tool_call", "name": "contacts_send_message",
                        "arguments": {"contact_id": "c-999", "message": "hi"}})
    assert missing.observation.status == 404
    assert "c-999" in missing.observation.result["error"]["message"]
    assert [(a.tool, a.status) for a in env.world.audit] == [("contacts_search", 200), ("contacts_send_message", 404)]


def test_unknown_tool_is_a_404_observation() -> None:
    env = TaskEnv(example("contacts-send-message"))
    env.reset()
    result = env.step(ToolCall(name="contacts_send", arguments={}))
    assert result.observation.status == 404
    assert "contacts_send_message" in result.observation.result["error"]["message"]


def test_arguments_as_json_text() -> None:
    env = TaskEnv(example("contacts-send-message"))
    env.reset()
    ok = env.step(ToolCall(name="contacts_search", arguments='{"query": "Maya"}'))
    assert ok.observation.status == 200 and ok.record.args == {"query": "Maya"}
    for bad in ('{"query": ', '["Maya"]'):
        result = env.step(ToolCall(name="contacts_search", arguments=bad))
        assert result.observation.status == 400
        assert result.record.error == result.observation.result["error"]["message"]
    assert len(env.world.audit) == 1  # the unparseable calls never reached the service


def test_ask_gets_the_users_reply_and_reveals_facts() -> None:
    env = TaskEnv(example("multi-turn-schedule-meeting"))
    env.reset()
    vague = env.step(Ask(text="What colour should the invite be?"))
    assert vague.observation.kind == "user_reply"
    assert vague.observation.text == NEUTRAL_REPLY and vague.info["revealed"] == []
    asked = env.step({"type": "ask", "text": "Which day suits you?"})
    assert "2026-12-03" in asked.observation.text
    assert asked.info["revealed"] == ["day"]
    assert env.trajectory().revealed == ["day"]


def test_an_open_question_reveals_what_is_left() -> None:
    env = TaskEnv(example("multi-turn-schedule-meeting"))
    env.reset()
    opened = env.step(Ask(text="Anything else I should know about the meeting?"))
    assert opened.info["revealed"] == ["day"] and "2026-12-03" in opened.observation.text


def test_answer_ends_the_episode_with_the_score_as_reward() -> None:
    env = TaskEnv(example("contacts-send-message"))
    env.reset()
    env.step(ToolCall(name="contacts_send_message", arguments={"contact_id": "c-103", "message": "budget review Friday"}))
    end = env.step(Answer(text="Told Omar Haddad."))
    assert end.done and end.observation.kind == "end" and not end.info["truncated"]
    report = env.score()
    assert end.reward == report.score
    verdicts = {r.id: r.passed for r in report.checks}
    assert verdicts == {"message-to-omar-haddad": False, "no-message-to-others": False, "confirmed": True}
    with pytest.raises(RuntimeError, match="reset"):
        env.step(Answer(text="again"))


def test_step_budget_truncates_the_episode() -> None:
    env = TaskEnv(example("contacts-send-message"), max_steps=2)
    env.reset()
    first = env.step(ToolCall(name="contacts_search", arguments={"query": "Omar"}))
    second = env.step(Ask(text="Which Omar?"))
    assert not first.done
    assert second.done and second.info["truncated"]
    assert env.trajectory().answer == ""
    assert second.reward == env.score().score < 1.0


def test_reset_starts_over_from_the_initial_state() -> None:
    package = example("multi-turn-schedule-meeting")
    env = TaskEnv(package)
    env.reset()
    env.step(Ask(text="What day?"))
    env.step(ToolCall(name="calendar_create_event",
                      arguments={"title": "Sync", "start": "2026-12-03T10:00", "attendees": ["maya.patel@corp.example"]}))
    env.step(Answer(text="done"))
    env.reset()
    trajectory = env.trajectory()
    assert not env.done and env.episode.steps == [] and trajectory.audit == [] and trajectory.revealed == []
    assert trajectory.final_state == World.from_package(package).state


def test_step_needs_reset_and_valid_actions() -> None:
    env = TaskEnv(example("todo-three-items"))
    with pytest.raises(RuntimeError, match="reset"):
        env.step(Answer(text="x"))
    env.reset()
    with pytest.raises(ValidationError):
        env.step({"type": "dance"})
    with pytest.raises(ValueError, match="max_steps"):
        TaskEnv(example("todo-three-items"), max_steps=0)


def test_env_does_not_share_state_with_the_package() -> None:
    package = example("todo-three-items")
    before = copy.deepcopy(package.initial_state)
    env = TaskEnv(package)
    env.reset()
    result = env.step(ToolCall(name="todo_list_tasks"))
    result.observation.result["tasks"].clear()
    env.step(ToolCall(name="todo_create_task", arguments={"title": "x"}))
    assert package.initial_state == before
    assert len(env.world.state["todo"]["tasks"]) == 4


def test_openai_tool_format() -> None:
    tool = example("todo-three-items").tools[1]
    assert openai_tool(tool) == {"type": "function", "function": {
        "name": "todo_create_task", "description": tool.description, "parameters": tool.parameters}}


# --------------------------------------------------------------------------- the documented agent loop


def test_docs_agent_loop_runs_and_scores_full(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    text = (REPO_ROOT / "docs" / "environment.md").read_text()
    block = re.search(r"### An agent loop\n.*?```python\n(.*?)```", text, re.DOTALL)
    assert block, "docs/environment.md lost its agent-loop example"
    monkeypatch.chdir(REPO_ROOT)
    namespace: dict[str, Any] = {}
    exec(compile(block.group(1), "docs/environment.md", "exec"), namespace)  # the project's own doc, not generated code
    assert namespace["report"].score == 1.0
    assert namespace["result"].done and namespace["result"].reward == 1.0
    assert capsys.readouterr().out.startswith("score 1.00, reward 1.00")
