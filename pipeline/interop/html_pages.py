"""The Jinja2 environment of the HTML pages synth writes or serves (``synth report``, the audit
page): sandboxed (a template reaches no Python internals), autoescaped (every value is escaped as
HTML unless a template marks it ``safe``) and strict (a missing name is an error, not an empty
string)."""

from __future__ import annotations

from functools import cache
from pathlib import Path

from jinja2 import FileSystemLoader, StrictUndefined
from jinja2.sandbox import SandboxedEnvironment

PAGES = Path(__file__).parent
"""The folder of the page templates (``*.html.j2``)."""


@cache
def html_environment() -> SandboxedEnvironment:
    """The one environment the page templates render in (built once; templates are cached)."""
    return SandboxedEnvironment(loader=FileSystemLoader(PAGES), autoescape=True, undefined=StrictUndefined,
                                keep_trailing_newline=True)
