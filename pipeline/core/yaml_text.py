"""Safe YAML that keeps dates and date-times as the strings they were written as.

The mock world compares strings (``due_date: 2026-12-10`` must stay ``"2026-12-10"``, not become a
``datetime.date``), so every YAML this project reads as data goes through ``load``.
"""

from __future__ import annotations

from typing import Any

import yaml

_TIMESTAMP_TAG = "tag:yaml.org,2002:timestamp"


class _Loader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # type: ignore[misc]
    """A safe loader without the implicit timestamp resolver."""


_Loader.yaml_implicit_resolvers = {
    first: [r for r in resolvers if r[0] != _TIMESTAMP_TAG]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


def load(text: str) -> Any:
    """Parse YAML ``text`` safely, dates left as strings (raises ``yaml.YAMLError``)."""
    return yaml.load(text, Loader=_Loader)  # noqa: S506 - a SafeLoader subclass
