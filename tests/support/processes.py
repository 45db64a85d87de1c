"""Process checks for tests and benchmarks of process lifetimes (Linux ``/proc``)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def _stat(pid: int | str) -> list[str]:
    """The fields of ``/proc/<pid>/stat`` after the command name: state, parent pid, ..."""
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()


def children(pid: int) -> list[int]:
    """Live (not zombie) processes whose parent is ``pid``."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                fields = _stat(entry)
            except OSError:
                continue
            if int(fields[1]) == pid and fields[0] != "Z":
                found.append(int(entry))
    return found


def alive(pid: int) -> bool:
    """Whether process ``pid`` exists and is not a zombie."""
    try:
        return _stat(pid)[0] != "Z"
    except OSError:
        return False


_SYNTH_REPORTING_OPENAI = """
import sys
sys.argv = ["synth", *sys.argv[1:]]
from pipeline.cli import main
try:
    main()
except SystemExit:
    pass
sys.stderr.write("\\nopenai imported: %s\\n" % ("openai" in sys.modules))
"""


def synth_imports_openai(args: list[str], cwd: Path, env: dict[str, str] | None = None,
                         timeout: float = 60) -> tuple[bool, str]:
    """Run ``synth args`` in a fresh Python process; whether it imported the ``openai`` client,
    and what it wrote to stderr (the report line last)."""
    done = subprocess.run([sys.executable, "-c", _SYNTH_REPORTING_OPENAI, *args], cwd=cwd, capture_output=True,
                          text=True, check=False, timeout=timeout, env=env)
    return done.stderr.rstrip().endswith("openai imported: True"), done.stderr
