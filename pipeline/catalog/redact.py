"""Keeping secrets out of the catalog.

Two rules, applied to everything a run stores about itself (``runs.parameters``, LLM error text):

- a field whose name is key-like (``api_key``, ``apiKey``, ``OPENAI_API_KEY``, ``secret``,
  ``password``, ``authorization``, ``credentials``, ``access_token``, ``token`` ...) is dropped, at
  any depth; names that merely mention tokens as a count (``max_tokens``) are kept;
- a string value that looks like a credential (``sk-…``, ``Bearer …``, ``key=…``) is masked
  wherever it appears, so an API error that echoes the key does not store it.
"""

from __future__ import annotations

import re
from typing import Any

_KEY_LIKE_NAME = re.compile(
    r"(api_?key|secret|passw(or)?d|authori[sz]ation|credential|private_?key|(^|_)(access_|auth_|refresh_|bearer_)?token$|(^|_)key$)"
)
_CREDENTIAL = re.compile(
    r"(sk-[A-Za-z0-9_\-]{8,}|(?i:bearer)\s+[A-Za-z0-9._\-]{8,}|(?i:(api_?key|token|password)=)[^\s&\"']+)"
)
MASK = "[redacted]"


def _normalise(name: str) -> str:
    """``apiKey``/``API-Key``/``api key`` → ``api_key``."""
    snake = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name)
    return re.sub(r"[\s\-]+", "_", snake).lower()


def is_key_like(name: str) -> bool:
    return bool(_KEY_LIKE_NAME.search(_normalise(name)))


def mask_credentials(text: str) -> str:
    """``text`` with every credential-looking substring replaced by ``[redacted]``."""
    return _CREDENTIAL.sub(MASK, text)


def strip_secrets(value: Any) -> Any:
    """A copy of ``value`` without key-like fields (at any depth) and with credentials masked."""
    if isinstance(value, dict):
        return {k: strip_secrets(v) for k, v in value.items() if not is_key_like(str(k))}
    if isinstance(value, list | tuple):
        return [strip_secrets(v) for v in value]
    if isinstance(value, str):
        return mask_credentials(value)
    return value
