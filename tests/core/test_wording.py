"""``pipeline.core.wording``: counts in words, and the commands that print them."""

from __future__ import annotations

from pathlib import Path

from pipeline.core.wording import counted
from tests.conftest import EXAMPLES_DIR


def test_counted_says_one_thing_and_many_things() -> None:
    assert [counted(n, "record") for n in (0, 1, 2, 1200)] == ["0 records", "1 record", "2 records", "1,200 records"]
    assert counted(1, "reply", "replies") == "1 reply" and counted(3, "reply", "replies") == "3 replies"


def test_play_says_1_record_not_1_records(synth) -> None:  # type: ignore[no-untyped-def]
    out = synth("play", Path(EXAMPLES_DIR / "todo-three-items.json")).stdout
    assert "1 record in todo.tasks" in out and "1 records" not in out and "(s)" not in out
