"""How a trajectory is stored as a training sample: OpenAI-format chat messages plus tool schemas.

This one renderer serves both the SFT export and the verifier's evidence-under-truncation check,
so what the verifier proves visible is exactly what a trainer sees.

- system: a fixed instruction; the tool schemas travel in the sample's ``tools`` field;
- user: the request text;
- each call: an assistant message with one ``tool_calls`` entry (id ``call_<step>``), then a
  ``tool`` message answering that id with the compact JSON of ``{"status", "result"}``, cut to
  its first ``obs_limit`` characters (a cut is marked with ``TRUNCATION_MARK``);
- each ask: an assistant message with the question, then a ``user`` message with the reply;
- the answer: a final assistant message.

A sample's size is the length of its compact JSON (messages and tools); a sample over
``sample_budget`` characters is dropped by the export policy.
"""

from __future__ import annotations

import json
from typing import Any

from pipeline.core.package import TaskPackage, Tool
from pipeline.core.strict_model import StrictModel
from pipeline.core.trajectory import Trajectory

DEFAULT_OBS_LIMIT = 1_000
DEFAULT_SAMPLE_BUDGET = 40_000
TRUNCATION_MARK = "…[truncated]"
SYSTEM_PROMPT = (
    "You are an assistant that completes the user's request by calling the tools provided. "
    "Ask the user when a detail you need is missing. Finish with a short answer to the user."
)


class Policy(StrictModel):
    obs_limit: int = DEFAULT_OBS_LIMIT
    sample_budget: int = DEFAULT_SAMPLE_BUDGET


class Sample(StrictModel):
    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]]
    chars: int
    truncated_observations: int

    def over_budget(self, policy: Policy) -> bool:
        return self.chars > policy.sample_budget


def compact(data: Any) -> str:
    """JSON text without spaces, UTF-8 kept. (Of plain JSON data, which holds no cycles: the
    encoder does not look for them.)"""
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"), check_circular=False)


def openai_tool(tool: Tool) -> dict[str, Any]:
    """A package tool in the OpenAI function-calling format."""
    return {"type": "function",
            "function": {"name": tool.name, "description": tool.description, "parameters": tool.parameters}}


def tool_schemas(package: TaskPackage) -> list[dict[str, Any]]:
    """The package's tools in the OpenAI function-calling format: what SFT samples and ``TaskEnv`` show."""
    return [openai_tool(t) for t in package.tools]


def observation_text(status: int | None, result: dict[str, Any] | None) -> str:
    """The full (uncut) text of one tool observation."""
    return compact({"status": status, "result": result})


def cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + TRUNCATION_MARK


def render_sample(package: TaskPackage, trajectory: Trajectory, policy: Policy | None = None) -> Sample:
    """Render a trajectory as a training sample under ``policy`` (default: 1,000 / 40,000)."""
    policy = policy or Policy()
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": SYSTEM_PROMPT},
        {"role": "user", "content": package.request.text},
    ]
    cuts = 0
    for step in trajectory.steps:
        if step.kind == "call" and step.status is not None:
            call_id = f"call_{step.index}"
            messages.append({
                "role": "assistant", "content": None,
                "tool_calls": [{"id": call_id, "type": "function",
                                "function": {"name": step.tool, "arguments": compact(step.args or {})}}],
            })
            full = observation_text(step.status, step.result)
            cuts += len(full) > policy.obs_limit
            messages.append({"role": "tool", "tool_call_id": call_id, "content": cut(full, policy.obs_limit)})
        elif step.kind == "ask":
            messages.append({"role": "assistant", "content": step.ask})
            messages.append({"role": "user", "content": step.reply})
        elif step.kind == "answer":
            messages.append({"role": "assistant", "content": step.answer})
    tools = tool_schemas(package)
    chars = len(compact({"messages": messages, "tools": tools}))
    # Built from the trajectory's own JSON data: validating it again would copy every message.
    return Sample.model_construct(messages=messages, tools=tools, chars=chars, truncated_observations=cuts)
