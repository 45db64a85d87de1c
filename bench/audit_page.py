"""The audit page's load time for a heavy package: 200 records in its initial state and a
30-step reference (5 list calls that each answer with up to 200 records, 24 creates, the
answer), refused with a witness (so the screen replays a second episode beside the reference).

    python bench/audit_page.py                                    # a fresh catalog holding the package
    python bench/audit_page.py --catalog /tmp/audit-100k.duckdb   # the package added to a copy of a big one

Figures printed: the server's time to answer ``GET /item/ROW`` (read the row and its labels,
replay the reference and the witness, render; measured by the client, over loopback, median and
worst of ``--loads``; target ≤ 300 ms), the page's size, and in headless Chromium
(``tests/support/browser.py``) the navigation timing of the same page: response end,
DOMContentLoaded and load, median of ``--loads``.
"""

from __future__ import annotations

import argparse
import http.client
import json
import shutil
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from pipeline.catalog.store import Catalog
from pipeline.core.codes import Code
from pipeline.core.outcomes import Finding, Verdict, Witness
from pipeline.core.package import TaskPackage
from pipeline.interop.audit_server import AuditOptions, running

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "todo-three-items.json"
RECORDS = 200
CREATES = 24
LISTS = 5


def heavy_package() -> TaskPackage:
    """The todo example grown to ``RECORDS`` records and a reference of ``LISTS`` list calls,
    ``CREATES`` creates and the answer (30 steps)."""
    doc: dict[str, Any] = json.loads(EXAMPLE.read_text())
    doc["initial_state"]["todo"]["tasks"] = [
        {"id": f"todo-{n:03d}", "title": f"Existing task number {n} about the quarterly plan", "priority":
         ("low", "medium", "high")[n % 3], "due_date": f"2026-12-{1 + n % 28:02d}", "status": ("open", "done")[n % 2],
         "notes": "carried over from the last review", "created_at": "2026-11-20T08:00:00Z"} for n in range(RECORDS)]
    titles = [f"Prepare item {n} for the offsite" for n in range(CREATES)]
    doc["request"]["text"] = (f"Add {CREATES} high-priority todo items due 2026-12-10: " + ", ".join(titles) + ".")
    doc["reference"] = ([{"call": "todo_list_tasks", "args": {}} for _ in range(LISTS)]
                        + [{"call": "todo_create_task", "args": {"title": t, "priority": "high", "due_date": "2026-12-10"}}
                           for t in titles]
                        + [{"answer": f"Added {CREATES} items: " + ", ".join(titles) + "."}])
    doc["checks"] = [
        {"id": "all-items", "kind": "state_count", "weight": 0.8, "collection": "todo.tasks", "scope": "created",
         "where": {"priority": "high", "due_date": "2026-12-10"}, "op": "==", "value": CREATES, "distinct_by": ["title"]},
        {"id": "answer", "kind": "answer_contains", "weight": 0.2, "values": titles[:3]}]
    doc["safety"] = [{"kind": "state_unchanged", "collection": "todo.tasks", "where": {"id": "todo-000"}}]
    doc.pop("id", None)
    return TaskPackage.model_validate(doc).with_id()


def witness(package: TaskPackage) -> Witness:
    """A wrong agent that makes all but the last five creates, recorded as passing."""
    actions = [{"type": "tool_call", "name": step.call, "arguments": step.args} for step in package.reference[:-6]
               if hasattr(step, "call")]
    return Witness(agent="wrong", name="drop_writes", claim="skips five of the writes", score=1.0, threshold=0.75,
                   actions=[*actions, {"type": "answer", "text": "Done."}])


def add_package(path: Path) -> int:
    package = heavy_package()
    finding = Finding(code=Code.GRADER_UNDERCONSTRAINED, message="a wrong agent passes", witness=witness(package))
    with Catalog.open(path) as writer:
        run = writer.start_run("bench-audit-page", "offline")
        row = writer.record(run, 0, 1, package, Verdict.build(package.id, [finding], 1.0))
        writer.add_label(row, "defective", "ana", "grader_underconstrained", "five writes may be skipped")
        writer.finish_run(run)
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--catalog", type=Path, help="add the package to a copy of this catalog")
    parser.add_argument("--loads", type=int, default=20, help="page loads to time")
    parser.add_argument("--no-browser", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "catalog.duckdb"
        if args.catalog:
            shutil.copyfile(args.catalog, path)
        row = add_package(path)
        with running(AuditOptions(catalog=path, sample=100)) as server:
            port, cookie = server.site.port, f"{server.site.cookie}={server.site.token}"
            times, size = [], 0
            for _ in range(args.loads + 1):
                connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
                started = time.perf_counter()
                connection.request("GET", f"/item/{row}", headers={"Cookie": cookie})
                response = connection.getresponse()
                body = response.read()
                times.append(time.perf_counter() - started)
                connection.close()
                assert response.status == 200, body[:200]
                size = len(body)
            times = times[1:]  # the first load compiles the templates
            print(f"GET /item/{row} (200 records, 30-step reference, one witness): median "
                  f"{statistics.median(times) * 1000:.0f} ms, worst {max(times) * 1000:.0f} ms over {len(times)} "
                  f"loads  [target <= 300 ms]; page {size / 1024:.0f} KiB")
            if args.no_browser:
                return
            from tests.support.browser import chromium_page

            with chromium_page() as load:
                page = load.page
                page.goto(server.url)
                marks: list[dict[str, float]] = []
                for _ in range(min(args.loads, 10)):
                    page.goto(server.url.split("?")[0] + f"item/{row}", wait_until="load")
                    marks.append(page.evaluate("() => { const n = performance.getEntriesByType('navigation')[0]; "
                                               "return {response: n.responseEnd, dom: n.domContentLoadedEventEnd, "
                                               "load: n.loadEventEnd}; }"))
                assert load.errors == [], load.errors
            for key in ("response", "dom", "load"):
                print(f"  browser {key}: median {statistics.median(m[key] for m in marks):.0f} ms after navigation start")


if __name__ == "__main__":
    main()
