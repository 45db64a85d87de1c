"""A simulated user played by a chat model, for rollouts (``TaskEnv(user=...)``, ``synth serve
--user-model``). Verification never uses it: it always uses the deterministic
``pipeline.core.user.SimulatedUser``, so a package's verdict does not depend on a model.

The model gets the package's persona and facts and is told to answer like that person: to give
a fact only when the question asks for it (or to confirm it), never to volunteer one, and to say
it has nothing to add otherwise. A fact counts as revealed when its value appears in the reply
(case folded), whatever the model claims, so ``revealed`` and ``asked_user`` grading stay honest.
After ``max_rounds`` questions the user gives the neutral reply without asking the model.

Requests go through ``pipeline.generation.model_client.ModelClient`` (its retries, its masking of
the key); the server and key come from ``pipeline.generation.model_endpoint.Endpoint``
(``OPENAI_BASE_URL`` and ``OPENAI_API_KEY`` unless given). A request that fails for good, or a
server that cannot serve at all, raises ``UserModelError``, whose text never holds the key.
"""

from __future__ import annotations

from collections.abc import Callable

from pipeline.core.errors import UserError
from pipeline.core.package import TaskPackage, User
from pipeline.core.user import NEUTRAL_REPLY, Reply, UserModel, UserModelError
from pipeline.generation.model_client import Backoff, ModelClient, ModelError, ServerUnusable
from pipeline.generation.model_endpoint import Endpoint

_INSTRUCTIONS = """You play the user who asked an AI assistant for help. Stay in character: {persona}
You know these facts (key: value):
{facts}
Answer the assistant's question in one or two short sentences, as this person would.
- Give a fact only when the question asks for it, asks to confirm it, or asks openly whether there is anything else to know; give its value exactly as written above.
- When the question proposes a wrong value for a fact, correct it with the right value.
- Never volunteer a fact the question does not ask about. If it asks about nothing you know, reply exactly: {neutral}"""


class LLMUser:
    """The user of ``package`` (its ``user`` spec) played by the model of ``client``."""

    def __init__(self, user: User | None, client: ModelClient, seed: int = 0) -> None:
        self.user = user
        self.client, self.seed = client, seed
        self.rounds = 0
        self.revealed: list[str] = []

    def fork(self) -> LLMUser:
        twin = LLMUser(self.user, self.client, self.seed)
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
        messages = [{"role": "system", "content": system}, {"role": "user", "content": question}]
        try:
            completion = self.client.complete_sync(messages, temperature=0, seed=self.seed)
        except (ModelError, ServerUnusable) as exc:
            raise UserModelError(f"the user model {self.client.model!r} failed: {exc}") from None
        text = completion.text.strip()
        hits = [f.key for f in self.user.facts if f.value.casefold() in text.casefold()]
        for key in hits:
            if key not in self.revealed:
                self.revealed.append(key)
        return Reply(text=text or NEUTRAL_REPLY, revealed=hits)


UserFactory = Callable[[TaskPackage], UserModel]


def llm_users(model: str, base_url: str | None = None, timeout: float = 60.0, *, max_attempts: int = 3,
              backoff: Backoff | None = None) -> UserFactory:
    """A factory of ``LLMUser``s sharing one ``ModelClient``: ``factory(package)`` plays that
    package's user. ``base_url`` defaults to ``OPENAI_BASE_URL``, else the OpenAI API."""
    endpoint = Endpoint.from_env(model, base_url)
    if not model or endpoint.offline:
        raise UserError("--user-model needs a model name, e.g. --user-model gpt-4o-mini")
    api_key = endpoint.api_key(f"the user model {model!r} needs OPENAI_API_KEY set "
                               "(or --user-base-url for a server that needs no key)")
    client = ModelClient(endpoint.model, endpoint.base_url, api_key, timeout=timeout, max_attempts=max_attempts,
                         backoff=backoff, model_option="--user-model", url_option="--user-base-url")
    return lambda package: LLMUser(package.user, client)
