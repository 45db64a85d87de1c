"""Which chat model, on which servers, with which key: the one place ``SYNTH_MODEL``,
``OPENAI_BASE_URL`` and ``OPENAI_API_KEY`` are read, and the one rule that balances requests over
several servers of the same model (``server_urls``, ``LeastBusy``).

It imports no model client, so deciding that a command runs offline never loads ``openai``.
"""

from __future__ import annotations

import itertools
import os
from dataclasses import dataclass

from pipeline.core.errors import UserError

OFFLINE = "offline"
"""The model name of the built-in offline generator (no LLM)."""
KEYLESS = "unused"
"""The key sent to a server given by URL when ``OPENAI_API_KEY`` is unset (a local server that
needs none). Shorter than ``model_client.MIN_SECRET_LENGTH``: it is not a secret."""


def server_urls(base_url: str | None) -> tuple[str, ...]:
    """The servers a ``base_url`` names: one URL, or several separated by commas (``--base-url``
    repeated is joined this way), blanks and repeats dropped, order kept; () for None."""
    urls = [u.strip() for u in (base_url or "").split(",")]
    return tuple(dict.fromkeys(u for u in urls if u))


def joined_urls(urls: list[str] | tuple[str, ...] | None) -> str | None:
    """Several ``--base-url`` values (each may itself be a comma list) as one ``base_url``: the
    form a run records and ``server_urls`` reads back; None for none."""
    found = server_urls(",".join(urls or []))
    return ",".join(found) or None


class LeastBusy:
    """Which of ``count`` servers takes the next request: the one with the fewest requests in
    flight, ties going round-robin, so equal servers share the load evenly and a slow one gets less.
    ``acquire()`` returns the server's index; ``release(index)`` when its request has ended."""

    def __init__(self, count: int) -> None:
        self.in_flight = [0] * max(count, 1)
        self._turn = itertools.cycle(range(len(self.in_flight)))

    def acquire(self) -> int:
        start = next(self._turn)
        size = len(self.in_flight)
        index = min(((start + k) % size for k in range(size)), key=self.in_flight.__getitem__)
        self.in_flight[index] += 1
        return index

    def release(self, index: int) -> None:
        self.in_flight[index] -= 1


@dataclass(frozen=True)
class Endpoint:
    """A model (``offline`` for none) and its servers' URLs (``base_url``: one URL or a comma list,
    see ``server_urls``; None: the OpenAI API). Holds no key."""

    model: str
    base_url: str | None = None

    @classmethod
    def from_env(cls, model: str | None = None, base_url: str | None = None) -> Endpoint:
        """``model``, else ``SYNTH_MODEL``, else ``offline``; ``base_url``, else ``OPENAI_BASE_URL``
        (either may list several servers, see ``server_urls``), else None (the OpenAI API)."""
        return cls(model or os.environ.get("SYNTH_MODEL") or OFFLINE,
                   joined_urls([base_url or os.environ.get("OPENAI_BASE_URL") or ""]))

    @property
    def offline(self) -> bool:
        return self.model == OFFLINE

    @property
    def server(self) -> str:
        """The servers in words, for messages: their URLs, or "the OpenAI API"."""
        return ", ".join(server_urls(self.base_url)) or "the OpenAI API"

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
