"""Reading package documents from files and folders (pipeline/io.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pipeline.core.errors import UserError
from pipeline.core.io import iter_package_files, read_documents


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
