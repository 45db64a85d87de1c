"""``examples/grpo_synth.py``'s environment side: its rollout function, driven by scripted policies
instead of a model (no TRL, no GPU), against ``synth serve --openenv``'s app. Replaying each
reference must earn the in-process score, and saying nothing the null floor."""

from __future__ import annotations

import importlib.util
import json
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from pipeline import TaskPackage
from pipeline.core.episode import actions_of
from pipeline.env.task_env import Answer, TaskEnv, play_reference
from pipeline.interop.openenv import SynthAction
from pipeline.interop.openenv_server import PackagePool, build_app, running
from tests.interop.test_openenv import PACKAGES

EXAMPLE = Path(__file__).parents[2] / "examples" / "grpo_synth.py"


@pytest.fixture(scope="module")
def example() -> ModuleType:
    spec = importlib.util.spec_from_file_location("grpo_synth", EXAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def pool() -> PackagePool:
    return PackagePool(PACKAGES, seed=5)


@pytest.fixture(scope="module")
def url(pool: PackagePool) -> Iterator[str]:
    with running(build_app(pool)) as base:
        yield base


def reference_policy(trainer: Any, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> dict[str, Any]:
    """Replies as a model that knows each package's reference would: the reference's actions
    (arguments as the reference resolved them), one per reply, in the example's text protocol."""
    package = next(p for p in PACKAGES if p.request.text == messages[1]["content"])
    turn = sum(m["role"] == "assistant" for m in messages)
    action = actions_of(play_reference(package).trajectory())[turn]
    if action["type"] == "tool_call":
        text = f'Let me look. <tool_call>{json.dumps({"name": action["name"], "arguments": action["arguments"]})}</tool_call>'
    else:
        text = action["text"]
    return {"text": text, "prompt_ids": [len(messages)], "completion_ids": [turn, turn], "logprobs": [-0.5, -0.5]}


def silent_policy(trainer: Any, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> dict[str, Any]:
    return {"text": ""}


def null_floor(package: TaskPackage) -> float:
    env = TaskEnv(package)
    env.reset()
    return env.step(Answer(text="")).reward


def test_the_rollout_function_earns_each_reference_its_score(example: ModuleType, url: str, pool: PackagePool) -> None:
    rollout = example.make_rollout_func(url, reference_policy, max_turns=20)
    prompts = [str(k) for k in range(len(pool))]
    out = rollout(prompts, None)
    assert set(out) == {"prompt_ids", "completion_ids", "logprobs", "env_reward", "passed", "package_id"}
    assert out["package_id"] == [p.id for p in pool.order]
    by_id = {p.id: p for p in PACKAGES}
    expected = [play_reference(by_id[i]).score() for i in out["package_id"]]
    assert out["env_reward"] == [e.score for e in expected]
    assert out["passed"] == [e.passed for e in expected]
    assert all(out["passed"])
    steps = [len(actions_of(play_reference(by_id[i]).trajectory())) for i in out["package_id"]]
    assert [len(c) for c in out["completion_ids"]] == [2 * n for n in steps]
    assert out["prompt_ids"] == [[2]] * len(prompts)
    assert example.reward_from_env(out["completion_ids"], **out) == out["env_reward"]


def test_saying_nothing_earns_the_null_floor(example: ModuleType, url: str, pool: PackagePool) -> None:
    rollout = example.make_rollout_func(url, silent_policy)
    out = rollout(["0", "1", str(len(pool) + 2)], None)
    picked = [pool.order[0], pool.order[1], pool.order[2]]
    assert out["package_id"] == [p.id for p in picked]
    assert out["env_reward"] == [null_floor(p.package) for p in picked]


def test_a_policy_out_of_turns_is_closed_and_graded(example: ModuleType, url: str, pool: PackagePool) -> None:
    package = pool.order[0].package
    tool = package.tools[0].name

    def busy(trainer: Any, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> dict[str, Any]:
        return {"text": f'<tool_call>{{"name": "{tool}", "arguments": {{}}}}</tool_call>'}

    out = example.make_rollout_func(url, busy, max_turns=3)(["0"], None)
    env = TaskEnv(package)
    env.reset()
    for _ in range(3):
        env.step({"type": "tool_call", "name": tool, "arguments": {}})
    assert out["env_reward"] == [env.step(Answer(text="")).reward]


def test_parse_reply(example: ModuleType) -> None:
    parse = example.parse_reply
    assert parse('a <tool_call>{"name": "x", "arguments": {"k": 1}}</tool_call> b <tool_call>{"name": "y"}'
                 '</tool_call>', True) == [SynthAction.call("x", {"k": 1}), SynthAction.call("y")]
    assert parse('<tool_call>{"name": "x", "arguments": "{\\"k\\": 1}"}</tool_call>', False) == [
        SynthAction.call("x", '{"k": 1}')]
    assert parse("<tool_call>not json</tool_call>", True) == [SynthAction.call("unparsed_tool_call",
                                                                               {"text": "not json"})]
    assert parse("Which day works for you?", True) == [SynthAction.question("Which day works for you?")]
    assert parse("Which day works for you?", False) == [SynthAction.final("Which day works for you?")]
    assert parse("  Done.  ", True) == [SynthAction.final("Done.")]
