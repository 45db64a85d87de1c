"""``synth serve --mcp`` over stdio against hostile clients: every line is screened with the bounds
of ``synth serve`` and the untrusted-text policy, a refused request gets an answer naming the
problem (a tool call a tool error), nothing prints a traceback, and the session goes on."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from typing import Any

from pipeline.env.mcp_server import refusal
from tests.conftest import REPO_ROOT

PACKAGE = REPO_ROOT / "examples" / "contacts-send-message.json"
INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}


def call(ident: int, arguments_json: str) -> str:
    return (f'{{"jsonrpc": "2.0", "id": {ident}, "method": "tools/call", "params": {{"name": "contacts_search", '
            f'"arguments": {arguments_json}}}}}')


def test_refusal_names_the_problem_and_answers_the_request_waiting() -> None:
    assert refusal(call(2, '{"query": "Omar"}').encode()) is None
    answer, reason = refusal(call(2, '{"query": "\\ud83d"}').encode()) or (None, "")
    assert "lone surrogate" in reason and answer is not None and answer.id == 2
    answer, reason = refusal(b'{"jsonrpc": "2.0", "id": 9, "method": "tools/list", "params": {"x": "\\u0000"}}') \
        or (None, "")
    assert "NUL" in reason and answer is not None and answer.error.code == -32602  # type: ignore[union-attr]
    answer, reason = refusal(b'{"jsonrpc": "2.0", "method": "notifications/x", "params": ' + b"[" * 300 + b"]" * 300
                             + b"}") or (None, "")
    assert answer is None and "deeper than 64" in reason  # a notification: nobody to answer


def test_hostile_lines_over_stdio_are_answered_and_the_session_goes_on() -> None:
    lines = [json.dumps(INIT), json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}),
             call(2, '{"query": "\\ud83d"}'),
             call(3, '{"query": ' + "[" * 300 + "]" * 300 + "}"),
             json.dumps({"jsonrpc": "2.0", "id": 4, "method": "resources/read", "params": {"uri": "synth://nope"}}),
             json.dumps({"jsonrpc": "2.0", "id": 5, "method": "prompts/get", "params": {"name": "nope"}}),
             call(6, '{"query": "a\\u0000b"}'),
             "not json at all",
             call(7, '{"query": "' + "x" * (2 << 20) + '"}'),
             call(8, '{"query": "Omar"}')]
    process = subprocess.Popen([sys.executable, "-m", "pipeline.cli", "serve", "--mcp", str(PACKAGE)],
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=REPO_ROOT)
    assert process.stdin is not None and process.stdout is not None
    answers: dict[Any, dict[str, Any]] = {}
    last = threading.Event()

    def read() -> None:
        assert process.stdout is not None
        for raw in process.stdout:
            message = json.loads(raw)
            answers[message.get("id")] = message
            if message.get("id") == 8:
                last.set()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        for line in lines:
            process.stdin.write(line.encode() + b"\n")
        process.stdin.flush()
        assert last.wait(timeout=60)  # the last request is answered: the session went on
        process.stdin.close()
        process.wait(timeout=60)
        reader.join(timeout=10)
        stderr = process.stderr.read().decode() if process.stderr else ""
    finally:
        process.kill()
        process.wait()
    text = {k: json.dumps(v) for k, v in answers.items()}
    assert answers[2]["result"]["isError"] and "lone surrogate" in text[2]
    assert answers[3]["result"]["isError"] and "deeper than 64 levels" in text[3]
    assert answers[4]["error"]["code"] == -32602 and "the one resource is synth://score" in text[4]
    assert answers[5]["error"]["code"] == -32602 and "the one prompt is 'task'" in text[5]
    assert answers[6]["result"]["isError"] and "NUL" in text[6]
    assert answers[None]["error"]["code"] == -32700 and "not JSON" in text[None]
    assert answers[7]["result"]["isError"] and "larger than the 1,048,576 bytes" in text[7]
    assert not answers[8]["result"].get("isError") and "contacts" in text[8]  # the session went on
    assert "Traceback" not in stderr and len(stderr.strip().splitlines()) == 5  # one line per refused line
