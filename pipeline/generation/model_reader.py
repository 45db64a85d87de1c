"""The model reader: a chat model confirms each reading of a request the verifier's rules made
(``pipeline.verify.readers`` has the protocol, the rules reader and the scripted one).

``ModelReader.confirm(claim, request)`` renders ``prompts/reader.j2`` (the request, the words the
claim rests on, the records it names, what the witness's agent did, the verifier's reading, what
the checks do, the other reading) in the sandboxed prompt environment, sends it through the one
model client in JSON mode at temperature 0, and reads ``{"answer", "reason"}``. A reply that says
neither ``agrees`` nor ``disagrees`` nor ``unsure`` — not JSON, another word, a request that failed
for good — is ``unsure``: a reader that cannot answer never lets a reading refuse a package.

``ModelReader.propose(context)`` asks ``prompts/propose.j2``: the request, the initial records and
the reference's actions; the model lists values it reads the request to make otherwise
(``Proposal``), which refuse only when a correct agent writing them loses score
(``pipeline.verify.proposals``).
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import ValidationError

from pipeline.core.outcomes import Claim, LLMCall, Proposal, Reading
from pipeline.generation.model_client import ModelClient, ModelError
from pipeline.generation.prompting import render

READER_PROMPT = "reader.j2"
PROPOSE_PROMPT = "propose.j2"
ANSWERS = ("agrees", "disagrees", "unsure")
MAX_REASON_CHARS = 300


def reader_messages(claim: Claim, request: str) -> list[dict[str, str]]:
    """The chat messages the model reader sends for ``claim`` about ``request``."""
    return [{"role": "user", "content": render(READER_PROMPT, claim=claim, request=request)}]


class ModelReader:
    """A model behind an OpenAI-compatible server as the reader (``client``: the one model
    client; its ``calls`` list every request sent)."""

    def __init__(self, client: ModelClient) -> None:
        self.client = client
        self.name = f"model:{client.model}"

    def propose(self, context: dict[str, Any]) -> tuple[list[Proposal], list[LLMCall]]:
        """What the model reads the request to ask that the reference does otherwise
        (``prompts/propose.j2`` over ``proposals.proposal_context``), and the requests it cost."""
        calls: list[LLMCall] = []
        messages = [{"role": "user", "content": render(PROPOSE_PROMPT, **context)}]
        try:
            completion = self.client.complete_sync(messages, temperature=0.0, response_format={"type": "json_object"},
                                                   calls=calls)
        except ModelError:
            return [], [c.model_copy(update={"model": self.name}) for c in calls]
        return parse_proposals(completion.text), [c.model_copy(update={"model": self.name}) for c in calls]

    def confirm(self, claim: Claim, request: str) -> Reading:
        try:
            completion = self.client.complete_sync(reader_messages(claim, request), temperature=0.0,
                                                   response_format={"type": "json_object"})
        except ModelError as exc:
            return Reading(answer="unsure", reason=f"the reader's model failed: {exc}"[:MAX_REASON_CHARS],
                           reader=self.name)
        answer, reason = parse_reply(completion.text)
        return Reading(answer=answer, reason=reason, reader=self.name, prompt_tokens=completion.prompt_tokens,
                       completion_tokens=completion.completion_tokens)


def parse_proposals(text: str) -> list[Proposal]:
    """The proposals of a reply to ``propose.j2``; none when the reply is not one (a reader that
    cannot answer proposes nothing). Keys a proposal has no field for are left out: a model's
    reply is read leniently, a user's file strictly."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        return []
    items = data.get("proposals") if isinstance(data, dict) else None
    out = []
    for item in items if isinstance(items, list) else []:
        if not isinstance(item, dict):
            continue
        try:
            out.append(Proposal.model_validate({k: v for k, v in item.items() if k in Proposal.model_fields}))
        except ValidationError:
            continue
    return out


def parse_reply(text: str) -> tuple[Any, str]:
    """``(answer, reason)`` from the reader's reply; ``unsure`` with the reason when the reply is
    not a JSON object whose ``answer`` is one of ``ANSWERS``."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        return "unsure", "the reader's reply was not JSON"
    if not isinstance(data, dict) or data.get("answer") not in ANSWERS:
        return "unsure", "the reader's reply named no answer (agrees, disagrees, unsure)"
    return data["answer"], str(data.get("reason", ""))[:MAX_REASON_CHARS]
