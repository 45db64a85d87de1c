"""The audit page in a real headless browser (Debian's Chromium, ``tests/support/browser.py``),
driven with the keyboard as a curator would: load the queue, label three packages, reload, and
see the labels and the figures change; a label given while another process writes the catalog
waits in the browser, across a reload, until it is stored; no console error; package text holding
HTML shown as text."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline.catalog.store import Catalog
from pipeline.interop.audit_server import AuditOptions, running
from tests.interop.test_audit_server import HOSTILE_NAME, HOSTILE_REQUEST, audit_catalog

# Chromium takes seconds to start (8 s on this loaded machine)
pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("chromium")]


def test_a_curator_labels_three_packages_with_the_keyboard(empty_catalog: Path) -> None:
    from tests.support.browser import chromium_page

    rows = audit_catalog(empty_catalog)
    with running(AuditOptions(catalog=empty_catalog, sample=50, annotator="curator")) as server, \
            chromium_page() as load:
        page = load.page
        page.goto(server.url)
        assert page.url.rstrip("/") == server.url.split("?")[0].rstrip("/")  # the token left the address
        queue = page.eval_on_selector_all("#queue tr[data-row]", "trs => trs.map(t => Number(t.dataset.row))")
        assert set(rows["hostile"]) <= set(queue) and len(queue) == len(server.site.order)
        assert page.inner_text('[data-figure="labels"]') == "0"
        assert page.inner_text('[data-figure="decided-rows"]') == "0"

        page.keyboard.press("j")
        page.keyboard.press("Enter")
        page.wait_for_url(f"**/item/{queue[0]}")
        page.keyboard.press("a")  # accept: saved, then the next package
        page.wait_for_url(f"**/item/{queue[1]}")
        page.keyboard.press("d")  # defective: pick the code by typing part of it
        page.keyboard.type("counts_calls")
        page.keyboard.press("Enter")
        page.wait_for_url(f"**/item/{queue[2]}")
        page.keyboard.press("c")  # a comment first, then unsure: saved with it
        page.keyboard.type("cannot tell from the request")
        page.keyboard.press("Enter")
        page.keyboard.press("u")
        page.wait_for_url(f"**/item/{queue[3]}")

        page.keyboard.press("k")  # back to the third: its label is there
        page.wait_for_url(f"**/item/{queue[2]}")
        assert page.inner_text('#labels tr[data-annotator="curator"]').split("\t")[:2] == ["curator", "unsure"]

        page.keyboard.press("q")
        page.wait_for_url(server.url.split("?")[0])
        page.reload()
        for row, label in zip(queue[:3], ("accept", "defective", "unsure"), strict=True):
            assert page.inner_text(f'[data-labels="{row}"]') == "1"
            assert page.inner_text(f'[data-mine="{row}"]').startswith(label)
        assert page.inner_text('[data-figure="labels"]') == "3"
        assert page.inner_text('[data-figure="decided-rows"]') == "2"
        assert page.inner_text('[data-figure="mine"]') == "3"

        # a run holds the writer lock: the label waits in the browser, survives a reload, and is
        # stored once the lock is free
        page.goto(server.url.split("?")[0] + f"item/{queue[3]}")
        assert load.errors == []
        with Catalog.open(empty_catalog):
            page.keyboard.press("a")
            page.wait_for_function("() => document.getElementById('notice').textContent.includes('not saved yet')")
            assert "being written by another process" in page.inner_text("#notice")
            page.reload()
            page.wait_for_function("() => document.getElementById('notice').textContent.includes('not saved yet')")
        page.wait_for_function("() => document.querySelector('#labels tr[data-annotator=\"curator\"]') !== null")
        assert page.url.endswith(f"/item/{queue[3]}")  # stored by the reload's page, which stays
        assert load.errors and all("status of 503" in e for e in load.errors)  # Chromium logs each busy answer
        load.errors.clear()

        page.goto(server.url.split("?")[0] + f"item/{rows['hostile'][0]}")
        assert HOSTILE_REQUEST in page.inner_text("#request")
        assert page.locator("#request img, #request script").count() == 0
        page.locator("details.state").first.locator("summary").click()
        page.fill("#state-search", "onerror")
        assert page.inner_text("#state-count") == "1 record(s) match"
        assert HOSTILE_NAME in page.inner_text("details.state[open] tbody tr:not(.hidden)")
        assert page.evaluate("() => window.__pwned") is None
        assert load.errors == []
        assert all(url.startswith(server.url.split("?")[0]) for url in load.requests), load.requests

    with Catalog.open(empty_catalog, read_only=True) as reader:
        stored = reader.labels()
    assert [(s.package_row, s.label, s.code, s.comment, s.annotator) for s in stored] == [
        (queue[0], "accept", None, None, "curator"),
        (queue[1], "defective", "grader_counts_calls", None, "curator"),
        (queue[2], "unsure", None, "cannot tell from the request", "curator"),
        (queue[3], "accept", None, None, "curator")]
