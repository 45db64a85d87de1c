"""Which chat model, on which server, with which key: the one place ``SYNTH_MODEL``,
``OPENAI_BASE_URL`` and ``OPENAI_API_KEY`` are read.

It imports no model client, so deciding that a command runs offline never loads ``openai``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from pipeline.core.errors import UserError

OFFLINE = "offline"
"""The model name of the built-in offline generator (no LLM)."""
KEYLESS = "unused"
"""The key sent to a server given by URL when ``OPENAI_API_KEY`` is unset (a local server that
needs none). Shorter than ``model_client.MIN_SECRET_LENGTH``: it is not a secret."""


@dataclass(frozen=True)
class Endpoint:
    """A model (``offline`` for none) and its server's URL (None: the OpenAI API). Holds no key."""

    model: str
    base_url: str | None = None

    @classmethod
    def from_env(cls, model: str | None = None, base_url: str | None = None) -> Endpoint:
        """``model``, else ``SYNTH_MODEL``, else ``offline``; ``base_url``, else ``OPENAI_BASE_URL``,
        else None (the OpenAI API)."""
        return cls(model or os.environ.get("SYNTH_MODEL") or OFFLINE,
                   base_url or os.environ.get("OPENAI_BASE_URL") or None)

    @property
    def offline(self) -> bool:
        return self.model == OFFLINE

    @property
    def server(self) -> str:
        """The server in words, for messages: its URL, or "the OpenAI API"."""
        return self.base_url or "the OpenAI API"

    def api_key(self, missing: str) -> str:
        """``OPENAI_API_KEY``; with none set, ``KEYLESS`` for a server given by URL, else a
        ``UserError`` saying ``missing``. Read at each call and never kept here: the caller hands
        it straight to the client."""
        key = os.environ.get("OPENAI_API_KEY") or None
        if key is not None:
            return key
        if self.base_url is not None:
            return KEYLESS
        raise UserError(missing)
