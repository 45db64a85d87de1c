"""Documents both ways: the ClawEnvKit export writes each documents record as a PDF file the
task's ``files`` copy to /workspace, and the import reads such PDFs back into records."""

from __future__ import annotations

import string
import sys
from pathlib import Path

import pypdf
import pytest
import yaml

from pipeline.core.clawenvkit.pdf_pages import PdfError, pdf_bytes, read_pages
from pipeline.core.package import TaskPackage
from pipeline.generation.offline import generate_package
from pipeline.interop.clawenvkit_export import export_clawenvkit_tasks
from pipeline.interop.clawenvkit_import import import_file


def contract_package() -> TaskPackage:
    return generate_package("robustness", "claw-retry-contract-renewal-task", 7, 1)


def extracted(data: bytes, tmp_path: Path) -> list[str]:
    path = tmp_path / "doc.pdf"
    path.write_bytes(data)
    return [page.extract_text() for page in pypdf.PdfReader(path).pages]


@pytest.mark.parametrize("pages", [
    ["Services Agreement. Annual fee: $1,200.00 (net) \\ due"],
    ["", "  spaced  ", "a\nb", "a\n\n\nb\n", "\nlead", "tab\there", "café – “quoted” €5"],
    [string.printable.replace("\x0b", "").replace("\x0c", "")],
])
def test_the_written_pdf_extracts_with_pypdf_to_exactly_the_page_texts(pages: list[str], tmp_path: Path) -> None:
    assert extracted(pdf_bytes(pages), tmp_path) == pages


def test_text_a_pdf_cannot_carry_exactly_is_refused() -> None:
    for text in ["漢字", "bell\x07"]:
        with pytest.raises(PdfError):
            pdf_bytes([text])


def test_export_writes_the_documents_as_pdfs_and_their_files_entries(tmp_path: Path) -> None:
    package = contract_package()
    records = package.initial_state["documents"]["documents"]
    report = export_clawenvkit_tasks([package], tmp_path)
    assert report.rows == 1 and report.refused_by_reason == {}
    task_file = tmp_path / report.files[0].file
    task = yaml.safe_load(task_file.read_text())
    assert "documents" not in task["fixtures"]  # the files carry them
    assert [f["target"] for f in task["files"]] == [f"/workspace/{r['path']}" for r in records]
    for entry, record in zip(task["files"], records, strict=True):
        assert extracted((task_file.parent / entry["source"]).read_bytes(), tmp_path) == record["pages"]


def test_export_then_import_gives_back_the_documents_records(tmp_path: Path) -> None:
    package = contract_package()
    report = export_clawenvkit_tasks([package], tmp_path)
    result = import_file(tmp_path / report.files[0].file)
    assert result.package is not None, result.verdict.findings
    assert result.package.initial_state["documents"] == package.initial_state["documents"]
    assert result.package.initial_state["todo"] == package.initial_state["todo"]


def test_a_missing_pdf_is_the_one_line_refusal(tmp_path: Path) -> None:
    report = export_clawenvkit_tasks([contract_package()], tmp_path)
    task = yaml.safe_load((tmp_path / report.files[0].file).read_text())
    (tmp_path / task["files"][0]["source"]).unlink()
    result = import_file(tmp_path / report.files[0].file)
    assert result.package is None
    (finding,) = result.verdict.findings
    assert "reads its documents from files" in finding.message and "\n" not in finding.message


def test_without_pypdf_the_import_says_which_extra_to_install(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    report = export_clawenvkit_tasks([contract_package()], tmp_path)
    monkeypatch.setitem(sys.modules, "pypdf", None)
    result = import_file(tmp_path / report.files[0].file)
    assert result.package is None
    (finding,) = result.verdict.findings
    assert "reading PDF files needs pypdf: pip install 'synth-task-packages[pdf]'" in finding.message
    assert "\n" not in finding.message


def test_pdfs_over_the_limits_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "big.pdf"
    path.write_bytes(pdf_bytes(["a", "b", "c"]))
    with pytest.raises(PdfError, match="3 pages, more than the 2"):
        read_pages(path, 1 << 20, 2, 1 << 20, 10.0)
    with pytest.raises(PdfError, match="more than the 10 a PDF may have"):
        read_pages(path, 10, 10, 1 << 20, 10.0)
    assert read_pages(path, 1 << 20, 3, 1 << 20, 10.0) == ["a", "b", "c"]
