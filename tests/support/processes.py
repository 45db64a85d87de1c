"""Process checks for tests and benchmarks of process lifetimes (Linux ``/proc``)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

PATIENCE_S = 120.0
"""How long a test waits for something that must happen (a process to exit, an answer, a row to
appear) before it fails: generous, because a loaded machine only makes each wait longer, and a
wait on a condition costs nothing when the condition holds early."""


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


def descends_from(pid: int, root: int) -> bool:
    """Whether process ``pid`` is ``root`` or one of its descendants (by parent pids, as they are now)."""
    while pid > 1:
        if pid == root:
            return True
        try:
            pid = int(_stat(pid)[1])
        except OSError:
            return False
    return root == pid


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


_MODEL_SERVER = """
import contextlib, itertools, json, os, sys, threading
from pipeline.generation.offline import generate_package, pick_template
from tests.support import OpenAIServer
from tests.support.processes import wait_for
numbers = itertools.count(1)
hold_after, gate, patience = int(sys.argv[2]), sys.argv[3], float(sys.argv[4])
def respond(_request):
    n = next(numbers)
    if gate and n > hold_after:
        with contextlib.suppress(AssertionError):  # the gate, or the tests' patience at the latest
            wait_for(lambda: os.path.exists(gate), timeout=patience, what="the gate file")
    return json.dumps(generate_package("general", pick_template("general", n), 11, n).model_dump(mode="json"))
with OpenAIServer(respond, latency_s=float(sys.argv[1])) as server:
    print(server.base_url, flush=True)
    threading.Event().wait()  # until the test kills this process
"""


def model_server(latency_s: float, hold_after: int = 0, gate: Path | None = None) -> tuple[subprocess.Popen[str], str]:
    """A local OpenAI-compatible server in its own process (so that killing it drops every
    connection, as a crashed server does), answering after ``latency_s`` with distinct valid
    packages of the offline generator (capability ``general``); and its URL. Kill it when done.
    With ``gate``, every request after the first ``hold_after`` is held until the file ``gate``
    exists: a run cannot get past that point before the test lets it."""
    proc = subprocess.Popen([sys.executable, "-c", _MODEL_SERVER, str(latency_s), str(hold_after), str(gate or ""), str(PATIENCE_S)],
                            stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    return proc, proc.stdout.readline().strip()


def wait_for(condition: Callable[[], bool], timeout: float = PATIENCE_S, every: float = 0.05, what: str = "") -> None:
    """Return once ``condition()`` holds, checking every ``every`` seconds; ``AssertionError``
    naming ``what`` was awaited after ``timeout`` seconds. Tests wait on this, never on a fixed
    sleep: a loaded machine only makes it take longer."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:g} s waiting for {what or condition.__name__}")
        time.sleep(every)
