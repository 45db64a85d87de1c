"""The claw profile's conformance cases run against ClawEnvKit's own mock services.

    PYTHONPATH=. /work/clawvenv/bin/python bench/claw_conformance.py --clawenvkit /work/claw [--json]

Runs with an interpreter that has ClawEnvKit's service dependencies (fastapi, httpx, pypdf,
pyyaml; a scratch venv outside the repository). For every case of
``tests/core/claw_conformance/*.yaml`` it writes the case's fixtures to a temporary file, points
the service's ``<SERVICE>_FIXTURES`` at it (``ERROR_RATE=0``), imports
``mock_services.<service>.server`` afresh from the checkout, and makes the case's calls with
FastAPI's TestClient; a case agrees when every call's status and response match (subset match,
``tests/support/claw_conformance.py``). For documents, each fixture record becomes a file under a
temporary ``DOCUMENTS_BASE_DIR``: a ``.pdf`` path a PDF with one page per page text
(``pipeline.core.clawenvkit.pdf_pages``), any other path a text file. The same cases run against synth's world in
``tests/core/test_claw_conformance.py``. Prints cases agreed/total per service and the calls that
disagree.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

from pipeline.core import yaml_text
from pipeline.core.clawenvkit.pdf_pages import pdf_bytes
from tests.support.claw_conformance import Case, load_cases, response_matches


def run_case(case: Case, checkout: Path, scratch: Path) -> list[str]:
    """The disagreements of one case against ClawEnvKit's service (empty: the case agrees)."""
    from fastapi.testclient import TestClient

    fixture_file = scratch / "fixtures.json"
    fixture_file.write_text(json.dumps(case.fixtures), encoding="utf-8")
    os.environ[f"{case.service.upper()}_FIXTURES"] = str(fixture_file)
    os.environ["ERROR_RATE"] = "0"
    if case.service == "documents":
        base = scratch / "docs"
        base.mkdir(exist_ok=True)
        os.environ["DOCUMENTS_BASE_DIR"] = str(base)
        for doc in case.fixtures.get("documents", []):
            target = base / doc["path"]
            target.parent.mkdir(parents=True, exist_ok=True)
            pages = [str(p) for p in doc.get("pages", [])]
            target.write_bytes(pdf_bytes(pages) if doc["path"].endswith(".pdf") else "\n".join(pages).encode())
    if str(checkout) not in sys.path:
        sys.path.insert(0, str(checkout))
    module_name = f"mock_services.{case.service}.server"
    sys.modules.pop(module_name, None)
    app: Any = importlib.import_module(module_name).app
    problems = []
    with TestClient(app) as client:
        for i, call in enumerate(case.calls):
            answer = client.post(call.endpoint, json=call.body)
            body = answer.json()
            if answer.status_code != call.status or not response_matches(call.response, body):
                problems.append(f"call {i + 1} {call.endpoint} {json.dumps(call.body)}: expected {call.status} "
                                f"{json.dumps(call.response)}, got {answer.status_code} {json.dumps(body)}")
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clawenvkit", type=Path, required=True, help="a ClawEnvKit checkout (holding mock_services/)")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args(argv)
    checkout = args.clawenvkit.resolve()
    if not (checkout / "mock_services").is_dir():
        print(f"error: {checkout} holds no mock_services/; pass a ClawEnvKit checkout", file=sys.stderr)
        return 2
    figures: dict[str, dict[str, Any]] = {}
    for case in load_cases(yaml_text.load):
        with tempfile.TemporaryDirectory() as scratch:
            problems = run_case(case, checkout, Path(scratch))
        entry = figures.setdefault(case.service, {"agreed": 0, "total": 0, "disagreements": []})
        entry["total"] += 1
        entry["agreed"] += not problems
        entry["disagreements"] += [f"{case.name}: {p}" for p in problems]
    agreed, total = sum(f["agreed"] for f in figures.values()), sum(f["total"] for f in figures.values())
    if args.json:
        print(json.dumps({"services": figures, "agreed": agreed, "total": total}, indent=2))
    else:
        for service, f in figures.items():
            print(f"{service:10} {f['agreed']}/{f['total']} cases agreed")
            for line in f["disagreements"]:
                print(f"    {line}")
        print(f"all        {agreed}/{total} cases agreed")
    return 0 if agreed == total else 1


if __name__ == "__main__":
    sys.exit(main())
