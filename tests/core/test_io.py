"""Reading package documents from files and folders (pipeline/io.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pipeline.core.errors import UserError
from pipeline.core.io import UnreadableDocument, iter_package_files, read_documents


def test_folders_contribute_their_json_and_jsonl_files_sorted(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    for name in ("b.json", "a.jsonl", "sub/c.json", "notes.txt", "d.yaml"):
        (tmp_path / name).write_text("{}")
    extra = tmp_path / "notes.txt"
    found = list(iter_package_files([tmp_path, extra]))
    assert found == [tmp_path / "a.jsonl", tmp_path / "b.json", tmp_path / "sub/c.json", extra]


def test_missing_path_is_a_user_error(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="no such file or folder") as info:
        list(iter_package_files([tmp_path / "absent.json"]))
    assert info.value.exit_code == 2


def test_jsonl_documents_carry_their_line(tmp_path: Path) -> None:
    path = tmp_path / "batch.jsonl"
    path.write_text(json.dumps({"n": 1}) + "\n\n" + json.dumps({"n": 2}) + "\n")
    assert list(read_documents([path])) == [(f"{path}:1", {"n": 1}), (f"{path}:3", {"n": 2})]


def test_json_file_is_one_document(tmp_path: Path) -> None:
    path = tmp_path / "p.json"
    path.write_text(json.dumps({"n": 1}, indent=2))
    assert list(read_documents([path])) == [(str(path), {"n": 1})]


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        ("ctrl.json", '{"a\x01": 1}', "ctrl.json: not valid JSON (Invalid control character at line 1, column 4)"),
        ("bad.json", '{"a": 1,\n', "bad.json: not valid JSON (Expecting property name enclosed in double quotes "
                                   "at line 2, column 1)"),
        ("list.json", "[1, 2]", "list.json: expected a JSON object (one task package), got list"),
        ("bad.jsonl", '{"a": 1}\n{oops}\n', "bad.jsonl:2: not valid JSON"),
        ("latin.json", None, "latin.json: cannot read"),
    ],
)
def test_unreadable_documents_are_user_errors(tmp_path: Path, name: str, text: str | None, message: str) -> None:
    path = tmp_path / name
    if text is None:
        path.write_bytes(b'{"text": "caf\xe9"}')
    else:
        path.write_text(text)
    with pytest.raises(UserError) as info:
        list(read_documents([path]))
    assert str(info.value).startswith(f"{tmp_path}/{message}")


def test_keep_going_yields_each_unreadable_document_in_its_place(tmp_path: Path) -> None:
    (tmp_path / "a.json").write_text('{"n": 1}')
    (tmp_path / "b.json").write_text("[1]")
    (tmp_path / "c.jsonl").write_text('{oops}\n{"n": 2}\n')
    (tmp_path / "d.json").write_bytes(b'{"text": "caf\xe9"}')
    read = list(read_documents([tmp_path], keep_going=True))
    assert [source for source, _ in read] == [str(tmp_path / "a.json"), str(tmp_path / "b.json"),
                                              f"{tmp_path / 'c.jsonl'}:1", f"{tmp_path / 'c.jsonl'}:2",
                                              str(tmp_path / "d.json")]
    assert read[0][1] == {"n": 1} and read[3][1] == {"n": 2}
    problems = [doc for _, doc in read if isinstance(doc, UnreadableDocument)]
    assert [p.reason.split(" (")[0] for p in problems] == [
        "expected a JSON object", "not valid JSON", "cannot read"]
    assert str(problems[1]) == f"{tmp_path / 'c.jsonl'}:1: {problems[1].reason}"
