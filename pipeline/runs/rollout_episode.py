"""One rollout episode: an agent model plays one package through ``TaskEnv``, graded as the verifier grades.

**The conversation** (``docs/environment.md``, "Rollouts") has the shape of the SFT export: the
system prompt, the request as the first user message; each assistant message with ``tool_calls``
is answered by one ``tool`` message per call (``{"status", "result"}`` as compact JSON, uncut);
an assistant message without tool calls is a question when ``is_question`` says so (the user's
reply comes back as a user message), else the final answer, which ends the episode. An episode
also ends after ``max_turns`` assistant messages (``turn_limit``), when its tokens reach
``budget_tokens`` or its messages ``MAX_CONVERSATION_CHARS`` (``budget``), or when the model server
fails for good (``server_timeout``, ``server_error``, ``malformed_reply``; ``error`` for another
failure): those count in no pass rate, and ``SERVER_FAILURE_LIMIT`` of them in a row stop the job
(``runs.rollout_record.ServerFailing``, resumable; the resumed job plays them again).

A job plays its episodes here on this event loop (``runs.rollout``) or on Ray actors
(``runs.ray_rollouts``); neither side imports the other for an episode.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from pipeline.core.rollouts import FinishReason, Rollout
from pipeline.core.training_format import SYSTEM_PROMPT, observation_text
from pipeline.core.user import UserModel, UserModelError
from pipeline.env.task_env import Answer, Ask, TaskEnv, ToolCall
from pipeline.runs.rollout_options import RolloutOptions

if TYPE_CHECKING:
    from pipeline.core.package import TaskPackage
    from pipeline.generation.model_client import ModelClient

CALLS_PER_TURN = 16
"""The episode's step budget is ``max_turns * CALLS_PER_TURN`` steps (tool calls and questions):
a model that sends more calls in its turns than that ends with ``turn_limit``."""
QUESTION_TAIL = "\"'`)]}*_ \t\n\u201d\u2019\u00bb"
"""What ``is_question`` strips from the end of a message before looking for the question mark."""
MAX_CONVERSATION_CHARS = 16 * 1024 * 1024
"""The most characters an episode's messages may carry (contents, tool calls, tool results): past
it the episode ends with ``budget``, so a model writing megabytes a turn cannot grow one episode
without bound (each turn sends the whole conversation again)."""
_FINISH_OF_STATUS: dict[str, FinishReason] = {
    "timeout": "server_timeout", "malformed_reply": "malformed_reply", "server_error": "server_error",
    "rate_limited": "server_error", "connection_error": "server_error"}
"""The finish reason of an episode whose request failed for good with a ``ModelError`` status
(an ``http_5xx`` is ``server_error``; any other status ``error``)."""

def is_question(text: str, has_user: bool) -> bool:
    """Whether an assistant message without tool calls is a question to the user (else it is the
    final answer): the package has a user, and the message, once trailing quotes, brackets,
    markdown emphasis and spaces (``QUESTION_TAIL``) are stripped, ends with a question mark
    (``?`` or the full-width ``？``). So "Which day works for you?" asks, "Booked it for Tuesday."
    answers, and in a package without a user every text is the answer."""
    return has_user and text.rstrip(QUESTION_TAIL).endswith(("?", "\uff1f"))


async def run_episode(client: ModelClient, package: TaskPackage, sample: int, options: RolloutOptions,
                      user: Callable[[TaskPackage], UserModel] | None = None) -> Rollout:
    """One episode of ``package`` played by ``client``'s model (the module says how), graded by
    ``TaskEnv.score`` (the verifier's grader)."""
    from pipeline.generation.model_client import ModelError

    env = TaskEnv(package, max_steps=options.max_turns * CALLS_PER_TURN, user=user)
    opening = env.reset()
    messages: list[dict[str, Any]] = [{"role": "system", "content": SYSTEM_PROMPT},
                                      {"role": "user", "content": opening.text}]
    turns = prompt_tokens = completion_tokens = 0
    carried = len(opening.text)  # characters the messages carry (MAX_CONVERSATION_CHARS)
    seen_ids: set[str] = set()
    finish: FinishReason | None = None
    error: str | None = None
    started = time.perf_counter()
    while finish is None:
        if turns >= options.max_turns:
            finish = "turn_limit"
            break
        if options.budget_tokens is not None and prompt_tokens + completion_tokens >= options.budget_tokens:
            finish = "budget"
            break
        if carried > MAX_CONVERSATION_CHARS:
            finish, error = "budget", (f"the conversation carries {carried:,} characters, more than the "
                                       f"{MAX_CONVERSATION_CHARS:,} an episode may")
            break
        try:
            reply = await client.complete(messages, tools=opening.tools, temperature=options.temperature,
                                          stream=options.stream)
        except ModelError as exc:
            finish = _FINISH_OF_STATUS.get(exc.status, "server_error" if exc.status.startswith("http_5") else "error")
            error = str(exc)
            break
        turns += 1
        carried += len(reply.text) + sum(len(c.id) + len(c.name) + len(c.arguments) for c in reply.tool_calls)
        prompt_tokens += reply.prompt_tokens
        completion_tokens += reply.completion_tokens
        if reply.tool_calls:
            # The server's ids, unless missing or used before in this episode (some servers number
            # every turn's calls from call_0): a conversation's tool messages must answer one call each.
            ids = [call.id if call.id and call.id not in seen_ids else f"call_{turns}_{i}"
                   for i, call in enumerate(reply.tool_calls)]
            seen_ids.update(ids)
            messages.append({"role": "assistant", "content": reply.text or None, "tool_calls": [
                {"id": call_id, "type": "function", "function": {"name": call.name, "arguments": call.arguments}}
                for call_id, call in zip(ids, reply.tool_calls, strict=True)]})
            for call_id, call in zip(ids, reply.tool_calls, strict=True):
                if env.done:
                    break
                record = env.step(ToolCall(name=call.name, arguments=call.arguments)).record
                observed = observation_text(record.status, record.result)
                carried += len(observed)
                messages.append({"role": "tool", "tool_call_id": call_id, "content": observed})
        elif is_question(reply.text, package.user is not None):
            messages.append({"role": "assistant", "content": reply.text})
            try:
                answered = await asyncio.to_thread(env.step, Ask(text=reply.text)) if user else env.step(Ask(text=reply.text))
            except UserModelError as exc:
                finish, error = "error", str(exc)
                break
            carried += len(answered.observation.text)
            messages.append({"role": "user", "content": answered.observation.text})
        else:
            messages.append({"role": "assistant", "content": reply.text})
            env.step(Answer(text=reply.text))
            finish = "answer"
        if finish is None and env.done:
            finish = "turn_limit"
    report = env.score()
    return Rollout(package_id=package.id, model=options.model, sample=sample, score=report.score,
                   checks=report.checks, safety=report.safety, turns=turns, prompt_tokens=prompt_tokens,
                   completion_tokens=completion_tokens, latency_s=round(time.perf_counter() - started, 4),
                   finish_reason=finish, error=error, messages=messages)


def user_factory(options: RolloutOptions) -> Callable[[TaskPackage], UserModel] | None:
    if options.user_model is None:
        return None
    from pipeline.env.llm_user import llm_users

    return llm_users(options.user_model, options.user_base_url)
