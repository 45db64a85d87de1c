"""Hostile requests to ``synth serve``: each case starts the server (``--port 0 --json``), sends its
requests over raw sockets, and passes only when every response is a clean JSON error with the
expected status, the server still serves a good request afterwards, and its log holds no traceback.

    python bench/hostile/serve.py MODE   # one case by hand
"""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
from pathlib import Path

from bench.hostile_inputs import Case

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "contacts-send-message.json"

# mode → [(request head with {host} for the Host header, body, expected status)]
REQUESTS: dict[str, list[tuple[str, bytes, int]]] = {
    "content-length": [
        ("POST /contacts/search HTTP/1.1\nHost: {host}\nContent-Length: abc", b"{}", 400),
        ("POST /contacts/search HTTP/1.1\nHost: {host}\nContent-Length: -1", b"{}", 400),
        ("POST /contacts/search HTTP/1.1\nHost: {host}\nContent-Length: 100000000000", b"{}", 413),
        ("POST /contacts/search HTTP/1.1\nHost: {host}\nContent-Length: " + "9" * 5000, b"{}", 413),
        ("POST /contacts/search HTTP/1.1\nHost: {host}\nContent-Length: 2\nContent-Length: 3", b"{}", 400),
        ("POST /contacts/search HTTP/1.1\nHost: {host}\nTransfer-Encoding: chunked", b"2\r\n{}\r\n0\r\n\r\n", 411),
    ],
    "bodies": [
        ("POST /contacts/search HTTP/1.1\nHost: {host}\nContent-Length: 400000", b"[" * 200_000 + b"]" * 200_000, 400),
        ("POST /contacts/search HTTP/1.1\nHost: {host}\nContent-Length: 2000000", b"x" * 2_000_000, 413),
        ("POST /contacts/search HTTP/1.1\nHost: {host}\nContent-Length: 6", b"\xff\xfe\xfd{}}", 400),
        ("POST /contacts/search HTTP/1.1\nHost: {host}\nContent-Length: 7", b'["Omar"', 400),
    ],
    "origin": [
        ("POST /contacts/reset HTTP/1.1\nHost: evil.example:8765\nContent-Length: 2", b"{}", 403),
        ("POST /contacts/reset HTTP/1.1\nHost: {host}\nOrigin: http://evil.example\nContent-Length: 2", b"{}", 403),
        ("POST /contacts/reset HTTP/1.1\nHost: {host}\nOrigin: null\nContent-Length: 2", b"{}", 403),
        ("OPTIONS /contacts/reset HTTP/1.1\nHost: {host}\nOrigin: http://evil.example", b"", 403),
    ],
    "requests": [
        ("GARBAGE", b"", 400),
        ("BREW /contacts/search HTTP/1.1\nHost: {host}", b"", 501),
        ("POST /" + "a" * 70_000 + " HTTP/1.1\nHost: {host}", b"", 414),
        ("POST /contacts/search HTTP/1.1\nHost: {host}\n" + "\n".join(f"X-{n}: y" for n in range(150)), b"", 431),
        ("GET /contacts/search HTTP/1.1\nHost: {host}", b"", 405),
    ],
}


def exchange(port: int, head: str, body: bytes) -> tuple[int, object]:
    """One request on a fresh connection; (status, decoded JSON body). Raises when the answer is
    missing or not JSON."""
    with socket.create_connection(("127.0.0.1", port), timeout=20) as sock:
        try:
            sock.sendall(head.replace("\n", "\r\n").encode("latin-1") + b"\r\n\r\n" + body)
            sock.shutdown(socket.SHUT_WR)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the server answered and closed before taking everything: read the answer
        data = b""
        try:
            while chunk := sock.recv(65536):
                data += chunk
        except ConnectionResetError:
            pass
    head_bytes, _, payload = data.partition(b"\r\n\r\n")
    status = int(head_bytes.split()[1])
    length = int(re.search(rb"Content-Length: (\d+)", head_bytes).group(1))  # type: ignore[union-attr]
    return status, json.loads(payload[:length])


def main(mode: str) -> int:
    server = subprocess.Popen([sys.executable, "-m", "pipeline.cli", "serve", str(EXAMPLE), "--port", "0", "--json"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    problems = []
    try:
        assert server.stdout is not None
        base_url = json.loads(server.stdout.readline())["base_url"]
        port = int(base_url.rsplit(":", 1)[1])
        for head, body, expected in REQUESTS[mode]:
            try:
                status, reply = exchange(port, head.format(host=f"127.0.0.1:{port}"), body)
            except Exception as exc:  # noqa: BLE001 (any failure to answer is the finding)
                problems.append(f"{head.splitlines()[0][:40]!r}: no clean answer ({type(exc).__name__}: {exc})")
                continue
            error = reply.get("error") if isinstance(reply, dict) else None
            if status != expected or not isinstance(error, dict) or error.get("status") != status:
                problems.append(f"{head.splitlines()[0][:40]!r}: got {status} {str(reply)[:80]}, expected {expected}")
        status, reply = exchange(port, f"POST /contacts/search HTTP/1.1\nHost: 127.0.0.1:{port}\nContent-Length: 17",
                                 b'{"query": "Omar"}')
        if status != 200:
            problems.append(f"a good request afterwards got {status}")
    finally:
        server.send_signal(signal.SIGINT)
        try:
            _, err = server.communicate(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
            _, err = server.communicate()
    if "Traceback" in err:
        problems.append("the server log holds a traceback: " + err.strip().splitlines()[-1][:120])
    for problem in problems:
        print(problem, file=sys.stderr)
    return 1 if problems else 0


def _case(name: str, mode: str) -> Case:
    return Case(name, lambda _w: ["python", str(Path(__file__).resolve()), mode], expect_code=0)


CASES = [
    _case("serve: malformed Content-Length values", "content-length"),
    _case("serve: nested, oversized, non-UTF-8 bodies", "bodies"),
    _case("serve: foreign Host, cross-origin requests", "origin"),
    _case("serve: garbled request lines and methods", "requests"),
]

if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    sys.exit(main(sys.argv[1]))
