"""The Jinja2 environment of the HTML pages synth writes or serves (``synth report``, the audit
page): sandboxed (a template reaches no Python internals), autoescaped (every value is escaped as
HTML unless a template marks it ``safe``) and strict (a missing name is an error, not an empty
string). Filters: ``n``, a count as the CLI writes it (``1,234``); ``counted``, a count with its
noun in the right number (``core.wording.counted``: "1 record", "3 records")."""

from __future__ import annotations

from functools import cache
from pathlib import Path

from jinja2 import FileSystemLoader, StrictUndefined
from jinja2.sandbox import SandboxedEnvironment

from pipeline.core.wording import counted

PAGES = Path(__file__).parent
"""The folder of the page templates (``*.html.j2``)."""


@cache
def html_environment() -> SandboxedEnvironment:
    """The one environment the page templates render in (built once; templates are cached)."""
    env = SandboxedEnvironment(loader=FileSystemLoader(PAGES), autoescape=True, undefined=StrictUndefined,
                               keep_trailing_newline=True)
    env.filters["n"] = lambda value: f"{value:,}"
    env.filters["counted"] = counted
    return env
