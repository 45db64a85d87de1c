"""``synth import --format clawenvkit`` against hostile and unusual input, and what the catalog
does with an import run afterwards (``synth regen``, ``synth run --resume``)."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from pipeline.catalog.store import Catalog
from pipeline.core.errors import UserError
from pipeline.core.services import find_operation
from pipeline.interop.clawenvkit_import import MAX_TASK_FILE_BYTES, import_clawenvkit, to_package
from tests.conftest import CliResult
from tests.interop.test_clawenvkit_import import FOREIGN_TASK

ALIAS_BOMB = "".join(
    f"{name}: &{name} [{', '.join([f'*{prev}'] * 9 if prev else ['lol'] * 9)}]\n"
    for prev, name in zip(["", *"abcdefgh"], "abcdefghi", strict=True)
)


def task(**changes: Any) -> dict[str, Any]:
    doc: dict[str, Any] = yaml.safe_load(FOREIGN_TASK)
    doc.update(changes)
    return doc


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


# --------------------------------------------------------------------------- paths and files


def test_a_missing_path_is_one_error_before_anything_is_recorded(tmp_path: Path,
                                                                 synth: Callable[..., CliResult]) -> None:
    write(tmp_path, "good.yaml", FOREIGN_TASK)
    catalog = tmp_path / "c.duckdb"
    result = synth("import", tmp_path / "good.yaml", tmp_path / "missing.yaml", "--catalog", catalog)
    assert result.exit_code == 2 and result.stderr.count("\n") == 1
    assert "missing.yaml: no such file or folder" in result.stderr
    assert not catalog.exists()  # no run recorded, not even a catalog made
    with pytest.raises(UserError, match="no such file or folder"):
        import_clawenvkit([tmp_path / "missing"])


def test_a_file_over_the_size_cap_is_not_read(tmp_path: Path) -> None:
    big = write(tmp_path, "big.yaml", FOREIGN_TASK + "# " + "x" * MAX_TASK_FILE_BYTES + "\n")
    [result] = import_clawenvkit([big])
    assert not result.imported
    assert [f.code.value for f in result.findings] == ["schema_invalid"]
    assert "larger than the 1 MiB a task file may be" in result.findings[0].message


def test_a_file_that_is_not_regular_is_not_read(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.yaml"
    os.mkfifo(fifo)
    [result] = import_clawenvkit([fifo])  # reading it would block for ever
    assert "not a regular file" in result.findings[0].message


def test_an_alias_bomb_is_refused_unexpanded(tmp_path: Path) -> None:
    assert len(ALIAS_BOMB) < 2048  # 9**9 strings once expanded
    [result] = import_clawenvkit([write(tmp_path, "bomb.yaml", ALIAS_BOMB)])
    assert "anchors and aliases are not allowed" in result.findings[0].message


def test_import_reports_progress_per_file(tmp_path: Path) -> None:
    for n in range(3):
        write(tmp_path, f"t{n}.yaml", FOREIGN_TASK)
    seen: list[tuple[int, int]] = []
    import_clawenvkit([tmp_path], on_progress=lambda done, total: seen.append((done, total)))
    assert seen == [(1, 3), (2, 3), (3, 3)]


# --------------------------------------------------------------------------- the format


def test_empty_fixtures_list_means_no_fixtures() -> None:
    package, _ = to_package(task(fixtures=[]))
    assert package.initial_state == {}


def _tool(**parameters: Any) -> dict[str, Any]:
    return {"name": "create_task", "service": "todo", "endpoint": "/todo/tasks/create", **parameters}


@pytest.mark.parametrize("tool", [
    _tool(parameters={"title": {"type": "string"}, "priority": {"type": "string"}}, required=["title"]),
    _tool(parameters=[{"name": "title", "type": "string", "required": True}, {"name": "priority", "type": "string"}]),
    _tool(parameters={"type": "object", "properties": {"title": {"type": "string"}, "priority": {"type": "string"}},
                      "required": ["title"]}),
])
def test_tool_parameters_in_each_accepted_layout(tool: dict[str, Any]) -> None:
    package, _ = to_package(task(tools=[tool], synth={}))  # synth's own layout keeps a tool's parameters
    assert package.tools[0].parameters == {"type": "object", "required": ["title"],
                                           "properties": {"title": {"type": "string"}, "priority": {"type": "string"}}}


def test_empty_parameters_take_the_operations() -> None:
    package, _ = to_package(task(tools=[_tool(parameters={})], synth={}))
    assert "title" in package.tools[0].parameters["properties"]


def test_on_the_claw_profile_a_tool_takes_its_operations_parameters() -> None:
    tool = _tool(parameters={"title": {"type": "integer"}}, required=["title"])
    package, _ = to_package(task(tools=[tool]))
    assert package.tools[0].parameters == find_operation("/todo/tasks/create", "claw")[1].parameters


@pytest.mark.parametrize(("parameters", "message"), [
    ([{"type": "string"}], "tools[0].parameters[0]: expected a mapping with a name"),
    ("title", "tools[0].parameters: expected a JSON Schema object"),
])
def test_malformed_parameters_say_what_is_wrong(parameters: Any, message: str) -> None:
    with pytest.raises(ValueError, match=message.replace("[", r"\[").replace("]", r"\]")):
        to_package(task(tools=[_tool(parameters=parameters)], synth={}))


def test_a_service_synth_lacks_is_named_as_such() -> None:
    doc = task(tools=[{"name": "set_config", "service": "config", "endpoint": "/config/set"}], synth={})
    with pytest.raises(ValueError) as caught:
        to_package(doc)
    message = str(caught.value)
    assert message.startswith("tool 'set_config': service 'config' is not one of synth's mock services (")
    assert "todo" in message and "declared service" not in message
    doc = task(tools=[{"name": "list_issues", "service": "github", "endpoint": "/github/issues"}])
    with pytest.raises(ValueError, match="service 'github' is not a ClawEnvKit service the claw profile mirrors"):
        to_package(doc)


def test_a_value_given_in_the_prompt_is_not_a_dangling_reference(tmp_path: Path) -> None:
    doc = task(prompt="Add a todo titled 'Email dana@example.com' for the launch.")
    doc["scoring_components"].append({"name": "names_dana", "weight": 0.0, "check": {
        "type": "audit_field_contains", "service": "todo", "action": "create_task", "field": "title",
        "contains": "dana@example.com"}})
    [result] = import_clawenvkit([write(tmp_path, "t.yaml", yaml.safe_dump(doc))])
    assert "dangling_reference" not in result.verdict.codes


# --------------------------------------------------------------------------- after an import


@pytest.fixture
def imported_catalog(tmp_path: Path, synth: Callable[..., CliResult]) -> Path:
    catalog = tmp_path / "c.duckdb"
    write(tmp_path, "bad.yaml", "prompt: [\n")
    assert synth("import", tmp_path / "bad.yaml", "--catalog", catalog).exit_code == 1
    return catalog


def test_regen_of_an_import_run_says_there_is_nothing_to_regenerate(imported_catalog: Path,
                                                                    synth: Callable[..., CliResult]) -> None:
    result = synth("regen", "--run", "1", "--catalog", imported_catalog)
    assert result.exit_code == 2 and result.stderr.count("\n") == 1
    assert "run 1 is an import (import:clawenvkit), not a generation run" in result.stderr
    assert "nothing to regenerate" in result.stderr
    result = synth("regen", "--catalog", imported_catalog)  # every run: imports are skipped
    assert result.exit_code == 0 and "nothing to regenerate" in result.stderr
    result = synth("regen", "--run", "9", "--catalog", imported_catalog)
    assert result.exit_code == 2 and "no run 9" in result.stderr


def test_resume_of_an_import_run_changes_nothing(imported_catalog: Path, synth: Callable[..., CliResult]) -> None:
    result = synth("run", "--resume", "1", "--catalog", imported_catalog)
    assert result.exit_code == 2 and "nothing to resume" in result.stderr and result.stderr.count("\n") == 1
    with Catalog.open(imported_catalog, read_only=True) as reader:
        assert [r.status for r in reader.runs()] == ["finished"]


def test_import_prints_a_summary_and_the_table_with_verbose(tmp_path: Path, synth: Callable[..., CliResult]) -> None:
    """As the docs describe: by default the outcome counts and the reason codes and checks left out
    as tables, no line per task; --verbose adds the table of task files and a line per finding."""
    write(tmp_path, "good.yaml", FOREIGN_TASK)
    result = synth("import", tmp_path / "good.yaml", "--no-record")
    first, second = result.stdout.splitlines()[:2]
    assert first == "1 task file: 1 imported as packages without a reference, 0 could not be read as tasks"
    assert second == ("without a reference none is verified: each is stored rejected with reference_error, as "
                      "expected; other findings: on 1 task (below)")
    assert "reference_error" in result.stdout and "2 checks left out" in result.stdout
    assert "todo-launch-001" not in result.stdout
    for n in range(2, 7):
        write(tmp_path, f"good-{n}.yaml", FOREIGN_TASK)
    many = synth("import", tmp_path, "--no-record").stdout
    assert many.splitlines()[0].startswith("6 task files: 6 imported")
    assert len(many.splitlines()) == len(result.stdout.splitlines())  # no line per task
    verbose = synth("import", tmp_path / "good.yaml", "--no-record", "--verbose").stdout
    header = verbose.splitlines()[2]
    for column in ("task", "name", "checks", "left out", "null agent", "findings"):
        assert column in header
    assert "todo-launch-001: reference_error: " in verbose
    assert json.loads(synth("import", tmp_path / "good.yaml", "--no-record", "--json").stdout)["imported"]


# --------------------------------------------------------------------------- round 2: links, numbers, NULs, PDFs


def test_a_task_that_links_out_of_the_folder_is_refused_unread_and_the_others_import(tmp_path: Path) -> None:
    outside = tmp_path / "secret"
    outside.mkdir()
    write(outside, "private.yaml", FOREIGN_TASK.replace("prompt:", "prompt: SECRET-TEXT"))
    folder = tmp_path / "tasks"
    folder.mkdir()
    write(folder, "a.yaml", FOREIGN_TASK)
    (folder / "b.yaml").symlink_to(outside / "private.yaml")
    by_name = {Path(r.source).name: r for r in import_clawenvkit([folder])}
    assert by_name["a.yaml"].imported and not by_name["b.yaml"].imported
    message = by_name["b.yaml"].findings[0].message
    assert "outside the folder" in message and "SECRET-TEXT" not in by_name["b.yaml"].model_dump_json()


def test_hostile_files_are_refused_one_by_one_with_their_reason(tmp_path: Path) -> None:
    write(tmp_path, "a-good.yaml", FOREIGN_TASK)
    write(tmp_path, "b-digits.yaml", FOREIGN_TASK + "difficulty_score: " + "9" * 10_000 + "\n")
    files = yaml.safe_dump(task(files=[{"source": "doc\x00.pdf", "target": "/workspace/doc.pdf"}]))
    write(tmp_path, "c-nul.yaml", files)
    write(tmp_path, "d-nul-text.yaml", yaml.safe_dump(task(prompt="hello\x00there")))
    write(tmp_path, "e-good.yaml", FOREIGN_TASK)
    results = {Path(r.source).name: r for r in import_clawenvkit([tmp_path])}
    assert [n for n, r in sorted(results.items()) if r.imported] == ["a-good.yaml", "e-good.yaml"]
    assert "cannot read the value" in results["b-digits.yaml"].findings[0].message
    assert "NUL character" in results["c-nul.yaml"].findings[0].message
    assert "NUL character" in results["d-nul-text.yaml"].findings[0].message
    assert all("\n" not in r.findings[0].message for r in results.values() if not r.imported)


def _shared_stream_pdf(pages: int, operators: int) -> bytes:
    """A small PDF whose ``pages`` pages all show one compressed content stream of ``operators``
    text operators: little on disk, a great deal for pypdf to walk."""
    import zlib

    stream = zlib.compress(b"BT /F1 12 Tf " + b"(a) Tj " * operators + b"ET", 9)
    objects = [b"<< /Type /Catalog /Pages 2 0 R >>",
               b"<< /Type /Pages /Kids [%s] /Count %d >>" % (b" ".join(b"%d 0 R" % (5 + i) for i in range(pages)), pages),
               b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
               b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(stream) + stream + b"\nendstream"]
    objects += [b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
                b"/Resources << /Font << /F1 3 0 R >> >> >>"] * pages
    out, offsets = bytearray(b"%PDF-1.4\n"), []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1) + b"".join(b"%010d 00000 n \n" % o for o in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    return bytes(out)


def test_a_pdf_of_many_pages_sharing_one_huge_content_stream_is_refused_quickly(tmp_path: Path) -> None:
    import time

    from pipeline.core.clawenvkit.pdf_pages import PdfError, read_pages
    from pipeline.interop.clawenvkit_import import MAX_PDF_CONTENT_BYTES

    path = tmp_path / "bomb.pdf"
    path.write_bytes(_shared_stream_pdf(500, 300_000))
    assert path.stat().st_size < 200_000
    started = time.monotonic()
    with pytest.raises(PdfError, match="bytes of content streams"):
        read_pages(path, 1 << 24, 500, MAX_PDF_CONTENT_BYTES, 20.0)
    assert time.monotonic() - started < 10
    small = tmp_path / "small.pdf"
    small.write_bytes(_shared_stream_pdf(3, 2_000))
    with pytest.raises(PdfError, match="took more than 0 s"):
        read_pages(small, 1 << 24, 500, MAX_PDF_CONTENT_BYTES, 0.0)
    pages = read_pages(small, 1 << 24, 500, MAX_PDF_CONTENT_BYTES, 20.0)  # within the budget: read
    assert len(pages) == 3 and all(page.count("a") == 2_000 for page in pages)


def test_the_summary_says_why_each_unreadable_file_could_not_be_read(tmp_path: Path,
                                                                     synth: Callable[..., CliResult]) -> None:
    """Without --verbose, each task file that could not be read is listed with its reason (the
    first ten; the rest counted), so a user needs no second run to learn what was wrong."""
    for i in range(12):
        (tmp_path / f"bomb{i:02d}.yaml").write_text('a: &a ["x", "x"]\nb: [*a, *a]\n')
    result = synth("import", tmp_path, "--no-record")
    assert result.exit_code == 1
    listed = [line for line in result.stdout.splitlines() if "anchors and aliases are not allowed" in line]
    assert len(listed) == 10 and "bomb00.yaml" in listed[0]
    assert "… and 2 more" in result.stdout
