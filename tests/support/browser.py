"""Pages in a real headless browser: Debian's Chromium (``/usr/bin/chromium``, ``apt-get install
chromium``) driven by Playwright over its pipe (Playwright's own browser download is never used).
Shared by the report's and the audit page's browser tests and their benchmarks."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from playwright.sync_api import ConsoleMessage, Page, sync_playwright

from tests.support.processes import PATIENCE_S

CHROMIUM = Path("/usr/bin/chromium")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]
"""Chromium's switches: headless, no sandbox (the machines run as root), and nothing that reaches
the network on its own; each session gets a new temporary profile (``--user-data-dir``)."""

CHARTS_DRAWN = """() => {
  const charts = [...document.querySelectorAll('.report-chart')];
  const drawn = charts.every(c => c.querySelector('.main-svg') && c.querySelector('.main-svg .trace'));
  return charts.length > 0 && drawn ? performance.now() : false;
}"""
"""A page function: the milliseconds since navigation start once every ``.report-chart`` holds a
Plotly plot with its traces drawn, else false."""


@dataclass
class PageLoad:
    """What loading the page showed: console errors and uncaught exceptions (``errors``), every
    URL the page requested (``requests``), and the milliseconds from navigation start until every
    chart was drawn (``charts_ms``)."""

    page: Page
    errors: list[str] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)
    charts_ms: float = 0.0


def chromium_available() -> bool:
    return CHROMIUM.exists()


@contextmanager
def chromium_page(timeout_s: float = PATIENCE_S) -> Iterator[PageLoad]:
    """A page in a new headless Chromium with a new profile, its console errors, uncaught
    exceptions and requests recorded from the start; the browser closes when the block ends."""
    profile = tempfile.mkdtemp(prefix="synth-chromium-")
    try:
        with sync_playwright() as playwright:
            context = playwright.chromium.launch_persistent_context(
                profile, executable_path=str(CHROMIUM), headless=True, args=FLAGS)
            try:
                page = context.new_page()
                page.set_default_timeout(timeout_s * 1000)
                load = PageLoad(page)

                def console(message: ConsoleMessage) -> None:
                    if message.type == "error":
                        load.errors.append(f"console: {message.text}")

                page.on("console", console)
                page.on("pageerror", lambda exc: load.errors.append(f"uncaught: {exc}"))
                page.on("request", lambda request: load.requests.append(request.url))
                yield load
            finally:
                context.close()
    finally:
        shutil.rmtree(profile, ignore_errors=True)


@contextmanager
def load_report(path: Path, timeout_s: float = PATIENCE_S) -> Iterator[PageLoad]:
    """Open ``path`` in a new headless Chromium with a new profile and wait until its charts are
    drawn; the browser closes when the block ends."""
    with chromium_page(timeout_s) as load:
        page = load.page
        page.goto(path.resolve().as_uri(), wait_until="commit", timeout=timeout_s * 1000)
        handle = page.wait_for_function(CHARTS_DRAWN, polling="raf", timeout=timeout_s * 1000)
        load.charts_ms = float(handle.json_value())
        page.wait_for_load_state("load")
        yield load
