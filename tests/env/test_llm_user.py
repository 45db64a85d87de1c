"""A chat model as the simulated user (rollouts), through the real ``openai`` client against a
local OpenAI-compatible server; verification never uses it."""

from __future__ import annotations

from typing import Any

import pytest

from pipeline.core.episode import Ask
from pipeline.core.package import load_package
from pipeline.core.user import NEUTRAL_REPLY, UserModelError
from pipeline.env.llm_user import llm_users
from pipeline.env.task_env import TaskEnv
from pipeline.generation.model_client import Backoff
from tests.generation.test_llm import StatusServer
from tests.support import Fault, FaultPlan, OpenAIServer

TINY = Backoff(initial=0.001, maximum=0.01)


def _answers(request: dict[str, Any]) -> str:
    """A stand-in model: the day for a question about days, the neutral reply otherwise."""
    question = request["messages"][-1]["content"]
    return "Thursday works, 2026-12-03." if "day" in question.lower() else NEUTRAL_REPLY


def test_the_model_plays_the_user_and_a_fact_counts_as_revealed_only_when_its_value_is_said(example_doc) -> None:
    package = load_package(example_doc("multi-turn-schedule-meeting"))
    with OpenAIServer(_answers) as server:
        env = TaskEnv(package, user=llm_users("user-model", base_url=server.base_url))
        env.reset()
        off_topic = env.step(Ask(text="What colour should the invite be?"))
        asked = env.step(Ask(text="Which day suits you?"))
    assert off_topic.observation.text == NEUTRAL_REPLY and off_topic.info["revealed"] == []
    assert asked.observation.text == "Thursday works, 2026-12-03." and asked.info["revealed"] == ["day"]
    system = server.requests[0]["messages"][0]["content"]
    assert "Busy product lead" in system and "day: 2026-12-03" in system  # persona and facts
    assert server.requests[0]["temperature"] == 0


def test_past_max_rounds_the_model_is_not_asked(example_doc) -> None:
    package = load_package(example_doc("multi-turn-schedule-meeting"))
    rounds = package.user.max_rounds  # type: ignore[union-attr]
    with OpenAIServer(_answers) as server:
        env = TaskEnv(package, user=llm_users("user-model", base_url=server.base_url), max_steps=rounds + 5)
        env.reset()
        for _ in range(rounds + 1):
            last = env.step(Ask(text="Which day?"))
    assert len(server.requests) == rounds and last.observation.text == NEUTRAL_REPLY


def test_a_dead_user_model_is_one_clear_error(example_doc) -> None:
    package = load_package(example_doc("multi-turn-schedule-meeting"))
    with OpenAIServer(_answers, faults=FaultPlan(at={n: Fault.SERVER_ERROR for n in range(1, 10)})) as server:
        env = TaskEnv(package, user=llm_users("user-model", base_url=server.base_url, backoff=TINY))
        env.reset()
        with pytest.raises(UserModelError, match="'user-model' failed: InternalServerError"):
            env.step(Ask(text="Which day?"))
        assert len(server.requests) == 3  # retried: three attempts in all


@pytest.mark.parametrize(("status", "says"), [(401, "OPENAI_API_KEY"), (404, "check --user-model")])
def test_a_refused_key_or_a_missing_user_model_says_what_to_check(example_doc, status: int, says: str) -> None:
    package = load_package(example_doc("multi-turn-schedule-meeting"))
    with StatusServer(status) as server:
        env = TaskEnv(package, user=llm_users("user-model", base_url=server.base_url))
        env.reset()
        with pytest.raises(UserModelError, match=f"'user-model' failed: .*HTTP {status}.*{says}"):
            env.step(Ask(text="Which day?"))
        assert server.requests == ["POST /v1/chat/completions"]  # not retried


def test_the_user_model_server_comes_from_openai_base_url(example_doc, monkeypatch: pytest.MonkeyPatch) -> None:
    package = load_package(example_doc("multi-turn-schedule-meeting"))
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with OpenAIServer(_answers) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        env = TaskEnv(package, user=llm_users("user-model"))
        env.reset()
        asked = env.step(Ask(text="Which day suits you?"))
    assert asked.info["revealed"] == ["day"] and len(server.requests) == 1
