"""The README's quick start: two commands, one set-up (an editable install both times, so an edit
made between them is what runs), shown as it happens, and the test command is the one CI runs."""

from __future__ import annotations

import re

from tests.conftest import REPO_ROOT


def _quick_start_commands() -> list[str]:
    readme = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    return [block.strip() for block in re.findall(r"```bash\n(.*?)```", section, re.S)]


def test_the_quick_start_installs_the_same_way_twice_shows_progress_and_ci_runs_its_tests() -> None:
    commands = _quick_start_commands()
    assert len(commands) == 2 and all("\n" not in c for c in commands)
    installs = [re.search(r"\.venv/bin/pip install (\S+ )*?(-e \S+)", c) for c in commands]
    assert all(installs), commands
    assert all(" -q" not in c.split("&&")[1] for c in commands)  # pip shows what it is doing
    run, tests = commands
    assert "synth run" in run and tests.endswith(".venv/bin/pytest")
    assert tests in (REPO_ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()  # CI runs it
