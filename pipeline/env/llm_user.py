"""A simulated user played by a chat model, for rollouts (``TaskEnv(user=...)``, ``synth serve
--user-model``). Verification never uses it: it always uses the deterministic
``pipeline.core.user.SimulatedUser``, so a package's verdict does not depend on a model.

The model gets the package's persona and facts and is told to answer like that person: to give
a fact only when the question asks for it (or to confirm it), never to volunteer one, and to say
it has nothing to add otherwise. A fact counts as revealed when its value appears in the reply
(case folded), whatever the model claims, so ``revealed`` and ``asked_user`` grading stay honest.
After ``max_rounds`` questions the user gives the neutral reply without asking the model.

Any OpenAI-compatible chat server works (``base_url``); the API key comes from
``OPENAI_API_KEY`` unless given, and never appears in replies or errors.
"""

from __future__ import annotations

import os
from collections.abc import Callable

import openai
from openai import OpenAI

from pipeline.core.errors import UserError
from pipeline.core.package import TaskPackage, User
from pipeline.core.user import NEUTRAL_REPLY, Reply, UserModel, UserModelError

_INSTRUCTIONS = """You play the user who asked an AI assistant for help. Stay in character: {persona}
You know these facts (key: value):
{facts}
Answer the assistant's question in one or two short sentences, as this person would.
- Give a fact only when the question asks for it, asks to confirm it, or asks openly whether there is anything else to know; give its value exactly as written above.
- When the question proposes a wrong value for a fact, correct it with the right value.
- Never volunteer a fact the question does not ask about. If it asks about nothing you know, reply exactly: {neutral}"""


class LLMUser:
    """The user of ``package`` (its ``user`` spec) played by ``model`` on ``client``."""

    def __init__(self, user: User | None, client: OpenAI, model: str, seed: int = 0) -> None:
        self.user = user
        self.client, self.model, self.seed = client, model, seed
        self.rounds = 0
        self.revealed: list[str] = []

    def fork(self) -> LLMUser:
        twin = LLMUser(self.user, self.client, self.model, self.seed)
        twin.rounds, twin.revealed = self.rounds, list(self.revealed)
        return twin

    def reply(self, question: str) -> Reply:
        self.rounds += 1
        if self.user is None or self.rounds > self.user.max_rounds:
            return Reply(text=NEUTRAL_REPLY, revealed=[])
        facts = "\n".join(f"- {f.key}: {f.value}" + (f" (it replaces {f.corrects})" if f.corrects else "")
                          for f in self.user.facts)
        system = _INSTRUCTIONS.format(persona=self.user.persona or "a busy colleague.", facts=facts or "(none)",
                                      neutral=NEUTRAL_REPLY)
        try:
            response = self.client.chat.completions.create(
                model=self.model, temperature=0, seed=self.seed,
                messages=[{"role": "system", "content": system}, {"role": "user", "content": question}])
        except openai.OpenAIError as exc:
            raise UserModelError(f"the user model {self.model!r} failed: {type(exc).__name__}") from None
        text = (response.choices[0].message.content or "").strip() if response.choices else ""
        hits = [f.key for f in self.user.facts if f.value.casefold() in text.casefold()]
        for key in hits:
            if key not in self.revealed:
                self.revealed.append(key)
        return Reply(text=text or NEUTRAL_REPLY, revealed=hits)


UserFactory = Callable[[TaskPackage], UserModel]


def llm_users(model: str, base_url: str | None = None, api_key: str | None = None,
              timeout: float = 60.0) -> UserFactory:
    """A factory of ``LLMUser``s sharing one client: ``factory(package)`` plays that package's user."""
    if not model:
        raise UserError("--user-model needs a model name, e.g. --user-model gpt-4o-mini")
    key = api_key or os.environ.get("OPENAI_API_KEY") or ("not-needed" if base_url else None)
    if key is None:
        raise UserError("the user model needs OPENAI_API_KEY, or --user-base-url for a local server")
    client = OpenAI(base_url=base_url, api_key=key, timeout=timeout, max_retries=2)
    return lambda package: LLMUser(package.user, client, model)
