"""Scripted agents behind the local OpenAI-compatible server, for rollout tests and benchmarks.

``ScriptedAgents(packages)`` is a responder for ``OpenAIServer``: it finds the package by the
conversation's first user message (the request) and answers as the policy the request's
``model`` names (``POLICIES``):

- ``reference``: replays the package's reference as chat turns: a ``call`` step is an assistant
  message with one tool call, an ``ask`` the question as text, the ``answer`` as text. Arguments'
  ``$ref`` values are read from the conversation (``steps[i]`` is the i-th step the agent took:
  its tool call's arguments, the ``status`` and ``result`` of the tool message answering it, the
  user's ``reply`` to a question) and ``$fact`` values from the user's replies (a fact of the
  package's user whose value a reply holds);
- ``mistake``: the same with the reference's last ``call`` step left out (``mistake_steps``);
- ``answer-at-once``: answers ``Done.`` at once, calling nothing;
- ``loop``: calls the package's first tool with no arguments, turn after turn, never answering;
- ``malformed``: first a tool call whose arguments are not JSON, then the reference.

Package documents are plain JSON (``TaskPackage.model_dump(mode="json")``): this module imports no
``pipeline`` code.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Any

POLICIES = ("reference", "mistake", "answer-at-once", "loop", "malformed")
MALFORMED_ARGUMENTS = '{"query": "unterminated'
_TOKEN = re.compile(r"\.?([A-Za-z_][A-Za-z0-9_]*)|\[(\d+)\]")


def mistake_steps(reference: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The reference without its last ``call`` step: the ``mistake`` policy's script."""
    calls = [i for i, step in enumerate(reference) if "call" in step]
    return [step for i, step in enumerate(reference) if not calls or i != calls[-1]]


class ScriptedAgents:
    """The responder; ``unknown`` counts requests whose request text names no known package (or
    whose model names no policy), and ``strangers`` keeps each one's model and request text (its
    first 80 characters), so a test that finds one can say what it was."""

    def __init__(self, packages: Iterable[dict[str, Any]]) -> None:
        self.by_request = {p["request"]["text"]: p for p in packages}
        self.unknown = 0
        self.strangers: list[tuple[str, str]] = []

    def __call__(self, body: dict[str, Any]) -> dict[str, Any]:
        messages = [m for m in body.get("messages", []) if isinstance(m, dict)]
        request = next((m.get("content") for m in messages if m.get("role") == "user"), None)
        package = self.by_request.get(request) if isinstance(request, str) else None
        policy = str(body.get("model", ""))
        if package is None or policy not in POLICIES:
            self.unknown += 1
            self.strangers.append((policy, str(request)[:80]))
            return {"content": "Done."}
        turns = sum(1 for m in messages if m.get("role") == "assistant")
        if policy == "answer-at-once":
            return {"content": "Done."}
        if policy == "loop":
            return _call(f"call_{turns}", package["tools"][0]["name"], "{}")
        if policy == "malformed" and turns == 0:
            return _call("call_bad", package["tools"][0]["name"], MALFORMED_ARGUMENTS)
        script = mistake_steps(package["reference"]) if policy == "mistake" else package["reference"]
        return _next_step(package, script, messages, turns)


def _call(call_id: str, name: str, arguments: str) -> dict[str, Any]:
    return {"content": None,
            "tool_calls": [{"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}]}


def _next_step(package: dict[str, Any], script: list[dict[str, Any]], messages: list[dict[str, Any]],
               turns: int) -> dict[str, Any]:
    records = _records(messages)
    if len(records) >= len(script):
        return {"content": "Done."}
    step = script[len(records)]
    if "call" in step:
        args = _resolve(step.get("args", {}), records, _facts(package, messages))
        return _call(f"call_{turns}", step["call"], json.dumps(args))
    return {"content": step.get("ask", step.get("answer", ""))}


def _records(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The steps the agent took, read back from the conversation (tool calls whose arguments are
    not a JSON object are left out: they ran nothing)."""
    answers = {m.get("tool_call_id"): m.get("content") for m in messages if m.get("role") == "tool"}
    records: list[dict[str, Any]] = []
    for i, message in enumerate(messages):
        if message.get("role") != "assistant":
            continue
        if message.get("tool_calls"):
            for call in message["tool_calls"]:
                try:
                    args = json.loads(call["function"]["arguments"])
                except json.JSONDecodeError:
                    continue
                observed = json.loads(answers.get(call["id"]) or "{}")
                records.append({"args": args, "status": observed.get("status"), "result": observed.get("result")})
        else:
            following = messages[i + 1] if i + 1 < len(messages) else {}
            reply = following.get("content") if following.get("role") == "user" else None
            records.append({"ask": message.get("content"), "reply": reply})
    return records


def _facts(package: dict[str, Any], messages: list[dict[str, Any]]) -> dict[str, str]:
    """The package user's facts whose value one of the user's replies (every user message after the
    request) holds, case folded."""
    replies = [str(m.get("content", "")).casefold() for m in messages if m.get("role") == "user"][1:]
    user = package.get("user") or {}
    return {f["key"]: f["value"] for f in user.get("facts", [])
            if any(f["value"].casefold() in reply for reply in replies)}


def _resolve(value: Any, records: list[dict[str, Any]], facts: dict[str, str]) -> Any:
    if isinstance(value, dict):
        if "$ref" in value or "$fact" in value:
            out = _lookup(value["$ref"], records) if "$ref" in value else facts.get(value["$fact"], "")
            if "prefix" in value or "suffix" in value:
                out = f"{value.get('prefix', '')}{out}{value.get('suffix', '')}"
            return out
        return {k: _resolve(v, records, facts) for k, v in value.items()}
    if isinstance(value, list):
        return [_resolve(v, records, facts) for v in value]
    return value


def _lookup(path: str, records: list[dict[str, Any]]) -> Any:
    """``steps[i].field...`` over ``records`` (None where nothing is there)."""
    parts = [m.group(1) if m.group(1) is not None else int(m.group(2)) for m in _TOKEN.finditer(path)]
    current: Any = records
    for part in parts[1:]:
        if isinstance(part, int) and isinstance(current, list) and -len(current) <= part < len(current):
            current = current[part]
        elif isinstance(part, str) and isinstance(current, dict):
            current = current.get(part)
        else:
            return None
    return current
