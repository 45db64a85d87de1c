"""Verification is bounded: a wall-time budget per package, and packages too deep or too large
are invalid before anything walks them."""

from __future__ import annotations

import json
from pathlib import Path

from pipeline.core.codes import Code
from pipeline.core.package import MAX_REQUEST_CHARS
from pipeline.verify.verifier import Options, verify_package


def test_past_its_time_limit_a_package_is_rejected_with_what_was_found_so_far(example_doc) -> None:
    verdict = verify_package(example_doc("todo-three-items"), Options(time_limit_s=1e-9))
    assert verdict.codes == [Code.VERIFICATION_TIMEOUT.value] and not verdict.accepted
    assert verdict.findings[-1].detail == {"limit_s": 1e-9}
    assert verify_package(example_doc("todo-three-items"), Options(time_limit_s=0)).accepted  # 0: no limit


def test_a_package_nested_too_deep_is_schema_invalid(example_doc) -> None:
    doc = example_doc("todo-three-items")
    deep: list = []
    for _ in range(200):
        deep = [deep]
    doc["initial_state"]["todo"]["tasks"][0]["notes"] = deep
    verdict = verify_package(doc)
    assert verdict.codes == ["schema_invalid"] and "nested deeper than 64 levels" in verdict.findings[0].message


def test_an_over_long_request_or_package_is_schema_invalid(example_doc) -> None:
    doc = example_doc("todo-three-items")
    doc["request"]["text"] = "x" * (MAX_REQUEST_CHARS + 1)
    assert verify_package(doc).codes == ["schema_invalid"]
    doc = example_doc("todo-three-items")
    doc["initial_state"]["todo"]["tasks"][0]["notes"] = "y" * 2_100_000
    verdict = verify_package(doc)
    assert verdict.codes == ["schema_invalid"] and "larger than 2,000,000 characters" in verdict.findings[0].message


def test_verify_reports_a_deep_file_as_a_rejected_package(tmp_path: Path, synth) -> None:
    path = tmp_path / "deep.json"
    path.write_text("[" * 5000 + "]" * 5000)
    result = synth("verify", str(path), "--json")
    assert result.exit_code == 1
    line = json.loads(result.stdout.strip().splitlines()[-1])
    assert line["codes"] == ["schema_invalid"] and "nested deeper than 64" in line["findings"][0]["message"]
