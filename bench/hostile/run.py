"""Hostile conditions for ``synth run``: a model server that cannot be reached or refuses the key,
and Ctrl-C, SIGTERM and SIGKILL mid-run. Each ends with the run ``interrupted`` (resumable),
nothing recorded as a rejection, no traceback, and no process left behind.

    python bench/hostile/run.py MODE WORKDIR   # the signal and 401 cases, by hand
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from bench.hostile_inputs import Case, Outcome
from tests.support import processes

SYNTH = [sys.executable, "-m", "pipeline.cli"]


def _catalog_state(path: Path) -> tuple[str | None, int]:
    """(status of run 1, rows recorded with a generation or verifier error)."""
    from pipeline.catalog.store import Catalog

    if not path.exists():
        return None, 0
    with Catalog.open(path, read_only=True) as catalog:
        rows = catalog.query("SELECT status FROM runs WHERE id = 1").rows
        errors = catalog.query("SELECT count(*) FROM findings WHERE code IN ('llm_error', 'verifier_error')").rows[0][0]
    return (rows[0][0] if rows else None), errors


def _interrupted(outcome: Outcome) -> str | None:
    status, errors = _catalog_state(outcome.workdir / "c.duckdb")
    if status != "interrupted":
        return f"run 1 ended {status}, not interrupted"
    if errors:
        return f"{errors} rows recorded as llm_error/verifier_error"
    if "--resume 1" not in outcome.stderr:
        return "no resume command in the error"
    return None


def _accepted(path: Path) -> int:
    from pipeline.catalog.store import Catalog

    try:
        with Catalog.open(path, read_only=True, busy_timeout=1.0) as catalog:
            return catalog.accepted_count()
    except Exception:  # noqa: BLE001 (not created yet)
        return 0


def drive(mode: str, workdir: Path) -> int:
    """Start ``synth run`` in its own process group, do to it what ``mode`` says, and relay its
    exit code and stderr (the bench then judges them as any case's)."""
    catalog = workdir / "c.duckdb"
    command = [*SYNTH, "run", "-c", "general", "-n", "5000", "--catalog", str(catalog), "--verify-processes", "2"]
    env = {**os.environ, "SYNTH_MODEL": "offline"}
    server = None
    if mode == "401":
        server = _refusing_server()
        command = [*SYNTH, "run", "-c", "general", "-n", "50", "--catalog", str(catalog), "--model", "m",
                   "--base-url", f"http://127.0.0.1:{server.server_address[1]}/v1"]
        env["OPENAI_API_KEY"] = "sk-not-a-valid-key-1234"
    proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            start_new_session=True, env=env)
    try:
        if mode != "401":
            deadline = time.monotonic() + 60
            while _accepted(catalog) < 20 and time.monotonic() < deadline:
                time.sleep(0.1)
        if mode in ("int", "term"):
            os.killpg(proc.pid, signal.SIGINT if mode == "int" else signal.SIGTERM)
        elif mode == "kill":
            children = processes.children(proc.pid)
            proc.kill()
            proc.wait()
            deadline = time.monotonic() + 5
            while any(processes.alive(c) for c in children) and time.monotonic() < deadline:
                time.sleep(0.05)
            survivors = [c for c in children if processes.alive(c)]
            for pid in survivors:
                os.kill(pid, signal.SIGKILL)
            if survivors or not children:
                print(f"{len(survivors)} of {len(children)} children outlived the killed run", file=sys.stderr)
                return 1
            return 0
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        if server is not None:
            server.shutdown()
    sys.stderr.write(err)
    return proc.returncode


def _refusing_server() -> ThreadingHTTPServer:
    """A local server answering every request 401, as an OpenAI-compatible server does to a bad key."""

    class Handler(BaseHTTPRequestHandler):
        def _refuse(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            data = b'{"error": {"message": "Incorrect API key provided", "type": "invalid_request_error"}}'
            self.send_response(401)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        do_GET = do_POST = _refuse

        def log_message(self, *_: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def _driven(name: str, mode: str, code: int) -> Case:
    check = None if mode == "kill" else _interrupted
    return Case(name, lambda w: ["python", str(Path(__file__).resolve()), mode, str(w)], expect_code=code,
                check=check)


def _dead(name: str, url: str) -> Case:
    return Case(name, lambda w: ["run", "-c", "general", "-n", "50", "--model", "m", "--base-url", url,
                                 "--catalog", str(w / "c.duckdb")],
                expect_code=2, check=_interrupted, env={"OPENAI_API_KEY": "sk-local-unused"})


CASES = [
    _dead("run: model server refuses connections", "http://127.0.0.1:9/v1"),
    _dead("run: model server host does not resolve", "http://no-such-host.invalid/v1"),
    _driven("run: model server refuses the key (401)", "401", 2),
    _driven("run: Ctrl-C to the process group", "int", 130),
    _driven("run: SIGTERM to the process group", "term", 143),
    _driven("run: SIGKILL leaves no child behind", "kill", 0),
]

if __name__ == "__main__":
    sys.exit(drive(sys.argv[1], Path(sys.argv[2])))
